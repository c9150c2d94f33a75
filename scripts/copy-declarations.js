// tsc reads the hand-written declaration files of lib/ (lib/interfaces/ioredis-types.d.ts) but never emits
// them, and the declarations it emits import them: each goes beside them, in both builds.
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const declarations = readdirSync('lib', { recursive: true }).filter((path) => path.endsWith('.d.ts'));
for (const build of ['dist/esm', 'dist/cjs']) {
  for (const path of declarations) copyFileSync(join('lib', path), join(build, path));
}
