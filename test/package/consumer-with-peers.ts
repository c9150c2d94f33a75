// The same application's Redis and health parts, compiled by scripts/package-check.sh against the packed
// tarball once ioredis and @nestjs/terminus are installed too: the ioredis types in the options are
// ioredis's own again (the misspelt option below must be refused), and the terminus entry compiles.
import { Module } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { LockModule, RedisLockStore, RedlockStore, type LockModuleOptions } from 'nestjs-lock';
import { LockHealthIndicator } from 'nestjs-lock/terminus';

const client = new Redis({ lazyConnect: true });

@Module({ imports: [LockModule.forRoot({ redis: client })], providers: [LockHealthIndicator] })
export class AppModule {}

export const stores = [
  new RedisLockStore({ client }),
  new RedisLockStore({ client: new Cluster([{ host: 'redis-0', port: 6379 }], { lazyConnect: true }) }),
  new RedlockStore({ nodes: [client, 'redis://redis-1:6379', { host: 'redis-2', port: 6379 }] }),
];

export const sentinel: LockModuleOptions = {
  redis: { sentinels: [{ host: 'sentinel-0', port: 26379 }], name: 'locks', password: 'from-the-vault' },
};

export const misspelt: LockModuleOptions = {
  // @ts-expect-error `pasword` is no ioredis option: caught only where the type is ioredis's RedisOptions
  redis: { host: 'redis-0', pasword: 'from-the-vault' },
};
