// Run by without-optional-peers.spec.ts in a child process whose module resolution hides the optional
// peers: the whole main entry point must work without them. Prints one JSON line of what it saw.
import 'reflect-metadata';
import { Injectable, Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  LockManager,
  LockModule,
  LockService,
  LockTelemetry,
  EtcdLockStore,
  MemoryLockStore,
  WithLock,
  checkLockStore,
} from '../../lib/index.js';

const OPTIONAL_PEERS = [
  'ioredis',
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

@Injectable()
class Job {
  @WithLock('job:<id>')
  async run(id: string): Promise<string> {
    return id;
  }
}

@Module({ imports: [LockModule.forRoot({ store: new MemoryLockStore() })], providers: [Job] })
class AppModule {}

// resolved, not loaded: the peers that are there cost this process nothing until the library asks for them
const hidden = OPTIONAL_PEERS.filter((name) => {
  try {
    import.meta.resolve(name);
    return false;
  } catch {
    return true;
  }
});

const manager = new LockManager({ store: new MemoryLockStore() });
const events: string[] = [];
manager.on('acquired', () => void events.push('acquired'));
manager.on('released', () => void events.push('released'));
const lock = await manager.acquire('direct', { label: 'Script.main' });
const label = (await manager.inspect('direct')).holder?.label;
await lock.release();
const telemetry = await LockTelemetry.attach(manager);
const health = await checkLockStore(manager.store);
await manager.close();
// the etcd store is built without etcd3 and says what to install once it is used
const etcd = new EtcdLockStore({ hosts: '127.0.0.1:1' });
const etcdError = await etcd.verify().then(
  () => '',
  (error: Error) => error.message,
);
await etcd.close();

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const ran = await app.get(Job).run('7');
const isLocked = await app.get(LockService).isLocked('job:7');
await app.close();

// forRoot() without a store option: the memory store, and a warning that says what that means
const warnings: string[] = [];
const keep = (message: unknown) => void warnings.push(String(message));
const quiet = () => undefined;
const logger: LoggerService = { log: quiet, error: quiet, warn: keep, debug: quiet, verbose: quiet };
@Module({ imports: [LockModule.forRoot()] })
class DefaultModule {}
const byDefault = await NestFactory.createApplicationContext(DefaultModule, { logger });
await byDefault.close();
const memoryWarning = warnings.some((warning) => warning.includes('locks are held in this process only'));

// asking for Redis without ioredis fails the bootstrap with what to install, before connecting anywhere
let redisError: string | null = null;
if (hidden.includes('ioredis')) {
  @Module({ imports: [LockModule.forRoot({ redis: 'redis://127.0.0.1:1' })] })
  class RedisModule {}
  redisError = await NestFactory.createApplicationContext(RedisModule, { logger: false, abortOnError: false }).then(
    () => 'started',
    (error: unknown) => (error as Error).message,
  );
}

console.log(
  JSON.stringify({
    hidden,
    events,
    label,
    telemetry: telemetry ?? null,
    healthy: health.healthy,
    ran,
    isLocked,
    memoryWarning,
    redisError,
    etcdError,
  }),
);
