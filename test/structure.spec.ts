import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The parts of lib/ that meet Nest's transports: they import each other one way only, and never in a cycle. */
const TRANSPORT_ROOMS = ['transports', 'keys', 'decorators', 'lock.interceptor.ts', 'lock-registry.ts', 'schedule'];

/** What scripts/check-structure.js finds: the import cycles (their files) and the folder pairs importing each other. */
function structure(): { cycles: string[][]; pairs: string[][] } {
  const { stdout, status } = spawnSync(process.execPath, ['scripts/check-structure.js'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(stdout).toMatch(/files of lib\/: \d+ import cycles, \d+ folder pairs importing each other/);
  const lines = stdout.split('\n');
  const cycles = lines.flatMap((line) => {
    const files = /^import cycle of \d+ files: (.+)$/.exec(line)?.[1];
    return files ? [files.split(', ')] : [];
  });
  const pairs = lines.flatMap((line) => {
    const pair = /^folders importing each other: (\S+) <-> (\S+)$/.exec(line);
    return pair ? [[pair[1], pair[2]]] : [];
  });
  expect(status).toBe(cycles.length + pairs.length > 0 ? 1 : 0);
  return { cycles, pairs };
}

const inTransportRooms = (file: string) => TRANSPORT_ROOMS.includes(file.split('/')[0]);

describe('the structure of lib/ around the transports', () => {
  let found: { cycles: string[][]; pairs: string[][] };

  beforeAll(() => {
    found = structure();
  });

  it('has no import cycle through transports/, keys/, decorators/, schedule/, the interceptor or the registry', () => {
    const { cycles } = found;
    expect(cycles.filter((files) => files.some(inTransportRooms))).toEqual([]);
  });

  it('has none of those folders importing another folder that imports it back', () => {
    const { pairs } = found;
    expect(pairs.filter((rooms) => rooms.some(inTransportRooms))).toEqual([]);
  });
});
