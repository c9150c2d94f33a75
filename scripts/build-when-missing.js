// The `prepare` script. npm runs it on `npm install <git url>` (in a clone that has no dist/) and on every
// `npm ci` or `npm install` here. It builds only when a file the package exports is missing, or the marker
// the build writes last (a build that failed half-way): a git dependency gets a built package, and an
// install in a working copy does not wait for a build it does not need. `npm pack` and `npm publish`
// always build afresh first (`prepack`), which leaves nothing to do here.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const { exports: entryPoints } = JSON.parse(readFileSync('package.json', 'utf8'));
const targets = (entry) => (typeof entry === 'string' ? [entry] : Object.values(entry).flatMap(targets));
const built = [...targets(entryPoints), './dist/cjs/package.json'].every((target) => existsSync(target));
if (!built) execSync('npm run build', { stdio: 'inherit' });
