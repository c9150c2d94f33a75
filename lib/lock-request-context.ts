import { AsyncLocalStorage } from 'node:async_hooks';
import type { KeySources } from './utils/key-template.js';

type RequestSource = NonNullable<KeySources['request']>;

const storage = new AsyncLocalStorage<RequestSource>();

/** The HTTP request being handled in this async flow (set by `LockInterceptor`), for key templates. */
export function currentRequest(): RequestSource | undefined {
  return storage.getStore();
}

/** Runs `fn` with `request` as the source of key template values. */
export function runWithRequest<T>(request: RequestSource, fn: () => T): T {
  return storage.run(request, fn);
}
