import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lock } from './lock.js';

/** What the current async flow holds: for reentrancy and for `LockService.current()`. */
export interface LockFrame {
  /** Locks held by this flow and its callers, by owner (one per LockManager) and key. */
  readonly held: ReadonlyMap<object, ReadonlyMap<string, Lock>>;
  /** The locks taken by the innermost locked scope, in the order they were taken. */
  readonly innermost: readonly Lock[];
}

const storage = new AsyncLocalStorage<LockFrame>();

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
  return storage.run({ held, innermost: locks }, fn);
}
