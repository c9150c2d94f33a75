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

/** A JSON request, with `headers` besides; resolves with the status and the parsed body. */
export async function request<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
}

/**
 * `request`, sent again after each 409 as its `Retry-After` says (at most a second apart), as a client of a busy
 * service would, until it gets another answer or `timeout` ms have passed.
 */
export async function requestServed<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  timeout = 60_000,
): Promise<{ status: number; body: T; headers: Headers }> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const response = await request<T>(method, url, body);
    if (response.status !== 409 || Date.now() > deadline) return response;
    const retryAfter = Number(response.headers.get('retry-after') ?? 1);
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(10, retryAfter * 1000))));
  }
}

/** Resolves once `check` resolves true, checking every 20 ms; fails after `timeout` ms. */
export async function until(check: () => Promise<boolean>, timeout = 5000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
