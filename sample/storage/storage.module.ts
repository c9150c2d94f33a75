import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { SampleConfig } from '../config/sample-config.js';
import { MemoryStorage } from './memory.storage.js';
import { RedisStorage } from './redis.storage.js';
import { STORAGE, type Storage } from './storage.js';

/** Provides the {@link Storage} everywhere: Redis when the config names one, else memory. */
@Module({})
export class StorageModule implements OnApplicationShutdown {
  constructor(@Inject(STORAGE) private readonly storage: Storage) {}

  static forRoot(): DynamicModule {
    return {
      module: StorageModule,
      global: true,
      providers: [
        {
          provide: STORAGE,
          inject: [SampleConfig],
          useFactory: (config: SampleConfig): Storage =>
            config.redisUrl ? new RedisStorage(config.redisUrl, config.keyPrefix) : new MemoryStorage(),
        },
      ],
      exports: [STORAGE],
    };
  }

  onApplicationShutdown(): Promise<void> {
    return this.storage.close();
  }
}
