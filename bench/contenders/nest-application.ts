import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockService } from '../../lib/index.js';

/** A Nest application context with `LockModule.forRoot({ redis })`, and the `LockService` a user injects. */
export interface NestLocks {
  readonly locks: LockService;
  close(): Promise<void>;
}

/** Boots an application context on the bench's server, as an app that injects `LockService` does. */
export async function openNestLocks(url: string): Promise<NestLocks> {
  @Module({ imports: [LockModule.forRoot({ redis: url })] })
  class BenchLocksModule {}

  const app: INestApplicationContext = await NestFactory.createApplicationContext(BenchLocksModule, {
    logger: false,
    abortOnError: false,
  });
  return { locks: app.get(LockService), close: () => app.close() };
}
