import { Module, type DynamicModule } from '@nestjs/common';
import { SampleConfig } from './sample-config.js';

/** Makes the {@link SampleConfig} injectable everywhere (by its class). */
@Module({})
export class ConfigModule {
  static forRoot(config: SampleConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: SampleConfig, useValue: config }],
      exports: [SampleConfig],
    };
  }
}
