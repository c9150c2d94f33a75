import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lock } from './lock.js';
import type { KeySources } from './utils/key-template.js';

/** The HTTP request whose values key templates may read. */
export type RequestSource = NonNullable<KeySources['request']>;

/**
 * What the current async flow holds: for reentrancy and for `LockService.current()`; and the HTTP request
 * it serves, if any, for key templates. One AsyncLocalStorage for both: on Node 20 each one adds work to
 * every promise the process creates.
 */
export interface LockFrame {
  /** Locks held by this flow and its callers, by owner (one per LockManager) and key. */
  readonly held: ReadonlyMap<object, ReadonlyMap<string, Lock>>;
  /** The locks taken by the innermost locked scope, in the order they were taken. */
  readonly innermost: readonly Lock[];
  /** The HTTP request being handled (set by `LockInterceptor` around a `@WithLock` handler). */
  readonly request?: RequestSource;
}

const storage = new AsyncLocalStorage<LockFrame>();
const NOTHING_HELD: LockFrame['held'] = new Map();

/** The frame of the current async flow, if any locked scope encloses it. */
export function currentFrame(): LockFrame | undefined {
  return storage.getStore();
}

/** The lock `owner` holds on `key` in the current flow (for reentrant calls). */
export function heldInFlow(owner: object, key: string): Lock | undefined {
  const lock = storage.getStore()?.held.get(owner)?.get(key);
  return lock?.isHeld ? lock : undefined;
}

/** Runs `fn` in a frame that adds `locks` (held by `owner`) to what the flow already holds. */
export function runWithLocks<T>(owner: object, locks: readonly Lock[], fn: () => T): T {
  const parent = storage.getStore();
  const held = new Map(parent?.held ?? []);
  const own = new Map(held.get(owner) ?? []);
  for (const lock of locks) own.set(lock.key, lock);
  held.set(owner, own);
  return storage.run({ held, innermost: locks, request: parent?.request }, fn);
}

/** The HTTP request being handled in this async flow, for key templates. */
export function currentRequest(): RequestSource | undefined {
  return storage.getStore()?.request;
}

/** Runs `fn` with `request` as the source of key template values, keeping what the flow holds. */
export function runWithRequest<T>(request: RequestSource, fn: () => T): T {
  const parent = storage.getStore();
  return storage.run({ held: parent?.held ?? NOTHING_HELD, innermost: parent?.innermost ?? [], request }, fn);
}
