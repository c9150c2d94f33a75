import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = join(process.cwd(), 'scripts/check-docs.js');

/** A page with one example of each kind the check must tell apart; line numbers matter to the assertions. */
const PAGE = [
  '# A page', // 1
  '', // 2
  '```ts', // 3
  "LockModule.forRoot({ redis: 'redis://localhost:6379', ttl: '30s' });", // 4
  '```', // 5
  '', // 6
  '```ts', // 7
  'LockModule.forRoot({ fencng: true });', // 8
  '```', // 9
  '', // 10
  '<!-- docs:check', // 11
  'declare const locks: LockService;', // 12
  '-->', // 13
  '', // 14
  '```ts', // 15
  "await locks.using('report', (lock) => lock.signal.throwIfAborted());", // 16
  'await missing.using();', // 17
  '```', // 18
  '', // 19
  '```ts ignore', // 20
  'this is not TypeScript', // 21
  '```', // 22
  '', // 23
  'See [a heading](#a-page), [none](#no-such-heading) and [a file](./no-such-file.md).', // 24
].join('\n');

// the script type-checks its blocks against lib/, which takes several seconds even on an idle machine
const COMPILE_TIME = 120_000;

describe('scripts/check-docs.js', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'check-docs-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it(
    'reports each block that does not compile and each broken link at its markdown line, and nothing else',
    async () => {
      const page = join(dir, 'page.md');
      await writeFile(page, PAGE);
      const outcome = await run('node', [script, page]).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
      const lines = outcome.stdout.trim().split('\n');
      const name = (line: string) => line.replace(/^.*?page\.md/, 'page.md');

      expect(outcome.code).toBe(1);
      expect(lines.slice(0, -1).map(name)).toEqual([
        expect.stringMatching(/^page\.md:24: the link #no-such-heading names no heading of /),
        expect.stringMatching(/^page\.md:24: the link \.\/no-such-file\.md leads to no file$/),
        expect.stringMatching(/^page\.md:8:22: TS2561: .*'fencng' does not exist.*Did you mean to write 'fencing'/),
        expect.stringMatching(/^page\.md:17:7: TS2304: Cannot find name 'missing'/),
      ]);
      expect(lines.at(-1)).toBe('3 TypeScript blocks in 1 markdown files: 4 found above');
    },
    COMPILE_TIME,
  );
});
