import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestFrame } from '../keys/key-sources.js';
import type { Lock } from './lock.js';

/**
 * The handler a `LockInterceptor` serves in this flow (it maps the handler's lock errors), and the request it
 * was routed: only that handler's key templates read it.
 */
export interface ServedRequest {
  /** The request's parts, when its transport has any (a microservice message has none). */
  readonly frame?: RequestFrame;
  /** Identifies the handler (its `@WithLock` definition), so a method it calls never reads its request. */
  readonly handler: object;
}

/**
 * What the current async flow holds: for reentrancy and for `LockService.current()`; and the request it
 * serves, if any, for key templates. One AsyncLocalStorage for both: on Node 20 each one adds work to
 * every promise the process creates.
 */
export interface LockFrame {
  /** Locks held by this flow and its callers, by owner (one per LockManager) and key. */
  readonly held: ReadonlyMap<object, ReadonlyMap<string, Lock>>;
  /** The locks taken by the innermost locked scope, in the order they were taken. */
  readonly innermost: readonly Lock[];
  /** The handler served and its request (set by `LockInterceptor` around a `@WithLock` handler). */
  readonly request?: ServedRequest;
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

/** The request this async flow serves, when `handler` is what it was routed to; for key templates. */
export function requestFor(handler: object): RequestFrame | undefined {
  const request = storage.getStore()?.request;
  return request?.handler === handler ? request.frame : undefined;
}

/** Whether a `LockInterceptor` serves this flow's call of `handler`, so that it maps the handler's lock errors. */
export function isServed(handler: object): boolean {
  return storage.getStore()?.request?.handler === handler;
}

/** Runs `fn` with `request` as the source of key template values, keeping what the flow holds. */
export function runWithRequest<T>(request: ServedRequest, fn: () => T): T {
  const parent = storage.getStore();
  return storage.run({ held: parent?.held ?? NOTHING_HELD, innermost: parent?.innermost ?? [], request }, fn);
}
