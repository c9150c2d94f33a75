import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

// each test runs a fresh Node process that loads Nest and lib/ from TypeScript: a few seconds on an idle machine,
// several times that on a loaded 2-core one; a ceiling, not a wait (each test ends when its child does)
jest.setTimeout(90_000);

/** Runs a TypeScript file in a fresh Node process with `packages` made unresolvable; resolves its stdout. */
function runWithout(
  packages: string[],
  file: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', './scripts/register-ts.js', '--import', './test/support/hide-packages.mjs', file],
      {
        cwd: root,
        env: { ...process.env, NODE_OPTIONS: '', HIDDEN_PACKAGES: packages.join(',') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('without the optional peers installed', () => {
  it('locks, inspects, emits events and boots a Nest app with none of the optional peers (telemetry, events, health, GraphQL, WebSockets, microservices, BullMQ, etcd, GLIDE)', async () => {
    const peers = [
      '@opentelemetry/api',
      '@nestjs/event-emitter',
      '@nestjs/terminus',
      'graphql',
      '@nestjs/websockets',
      '@nestjs/microservices',
      'bullmq',
      'etcd3',
      '@valkey/valkey-glide',
    ];
    const { code, stdout, stderr } = await runWithout(peers, 'test/package/without-optional-peers.ts');
    expect({ code, stderr: stderr.replace(/^.*ExperimentalWarning.*\n?|^.*--trace-warnings.*\n?/gm, '') }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
      hidden: peers,
      events: ['acquired', 'released'],
      label: 'Script.main',
      telemetry: null,
      healthy: true,
      ran: '7',
      isLocked: false,
      memoryWarning: true,
      redisError: null,
      etcdError: expect.stringMatching(/the etcd store needs the "etcd3" package.*npm install etcd3/),
    });
  });

  it('runs the main entry with the memory store when ioredis cannot be resolved, and says to install it for Redis', async () => {
    const { code, stdout, stderr } = await runWithout(['ioredis'], 'test/package/without-optional-peers.ts');
    expect({ code, stderr: stderr.replace(/^.*ExperimentalWarning.*\n?|^.*--trace-warnings.*\n?/gm, '') }).toEqual({
      code: 0,
      stderr: '',
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({
      hidden: ['ioredis'],
      events: ['acquired', 'released'],
      ran: '7',
      memoryWarning: true,
      redisError: expect.stringMatching(/^Invalid nestjs-lock option "redis".*npm install ioredis\.$/),
    });
  });

  it('fails to load nestjs-lock/terminus, and only that entry, when @nestjs/terminus is missing', async () => {
    const { code, stderr } = await runWithout(['@nestjs/terminus'], 'lib/terminus.ts');
    expect(code).not.toBe(0);
    expect(stderr).toContain("Cannot find package '@nestjs/terminus'");
  });
});
