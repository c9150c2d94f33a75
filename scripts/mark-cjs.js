// dist/cjs sits inside a "type": "module" package; this marker makes Node read it as CommonJS.
import { writeFileSync } from 'node:fs';

writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
