import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/*
 * Where a bench's numbers come from, for the header of its results file: the versions of the packages it ran
 * and the revision of this project.
 */

/** The installed version of package `name`, or 'unknown'. */
export function versionOf(name: string): string {
  try {
    return (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The short commit of HEAD, and whether lib/ has changes not committed (numbers of code no commit holds). */
export function gitRevision(): string {
  try {
    const revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', 'lib'], { encoding: 'utf8' }).trim();
    return dirty ? `${revision} + uncommitted changes in lib/` : revision;
  } catch {
    return 'unknown';
  }
}
