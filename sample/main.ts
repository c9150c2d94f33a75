import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module.js';
import { SampleConfig } from './config/sample-config.js';

const logger = new Logger('Sample');
const config = await SampleConfig.fromEnvironment();
if (!config.redisUrl) {
  logger.warn(
    'No Redis: REDIS_URL is not set and nothing answers on 127.0.0.1:6379. Locks and data are kept in this ' +
      'process only (MemoryLockStore): enough to try the endpoints, not to run several instances.',
  );
}

const app = await NestFactory.create(AppModule.register(config));
app.enableShutdownHooks();
await app.listen(config.port);

const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
const where = config.redisUrl ? `Redis at ${new URL(config.redisUrl).host}` : 'memory';
logger.log(
  `Instance "${config.instanceId}" listening on ${url}; locks ${config.locks ? 'on' : 'OFF'}; data in ${where}`,
);
