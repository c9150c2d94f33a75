import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from '../../sample/app.module.js';
import { SampleConfig } from '../../sample/config/sample-config.js';

/** An instance of the sample app running in this process, on a free port. */
export interface RunningSample {
  readonly app: INestApplication;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the sample's own AppModule, as `sample/main.ts` does, with `values` instead of the environment. */
export async function startSample(values: Partial<SampleConfig>): Promise<RunningSample> {
  const app = await NestFactory.create(AppModule.register(new SampleConfig({ port: 0, ...values })), {
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** A JSON request; resolves with the status and the parsed body. */
export async function request<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
}

/** Resolves once `check` resolves true, checking every 20 ms; fails after `timeout` ms. */
export async function until(check: () => Promise<boolean>, timeout = 5000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
