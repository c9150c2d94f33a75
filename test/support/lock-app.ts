import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { LockModule, type LockModuleOptions } from '../../lib/index.js';

/** Boots a Nest application with only `LockModule.forRoot(options)`, quiet; the caller closes it. */
export async function bootLockApp(options: LockModuleOptions): Promise<INestApplication> {
  const ref = await Test.createTestingModule({ imports: [LockModule.forRoot(options)] }).compile();
  const app = ref.createNestApplication({ logger: false });
  await app.init();
  return app;
}
