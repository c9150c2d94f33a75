import type { Lock } from './lock.js';

/**
 * The leases a lease book holds. A mutex has one per key, which is also the local holder that keeps every
 * other acquisition of the key out; permits have several per key, none of which keeps the others out.
 */
export interface HeldLeases extends Iterable<Lock> {
  readonly size: number;
  add(lock: Lock): void;
  /** Stops holding `lock`, if it is held. */
  delete(lock: Lock): void;
  has(lock: Lock): boolean;
  /** The lease held on `key` that keeps out every other acquisition of it, if any. */
  excluderOf(key: string): Lock | undefined;
}

/** The leases of a mutex: one per key. */
export class LeasesByKey implements HeldLeases {
  private readonly byKey = new Map<string, Lock>();

  get size(): number {
    return this.byKey.size;
  }

  add(lock: Lock): void {
    this.byKey.set(lock.key, lock);
  }

  delete(lock: Lock): void {
    if (this.byKey.get(lock.key) === lock) this.byKey.delete(lock.key);
  }

  has(lock: Lock): boolean {
    return this.byKey.get(lock.key) === lock;
  }

  excluderOf(key: string): Lock | undefined {
    return this.byKey.get(key);
  }

  [Symbol.iterator](): Iterator<Lock> {
    return this.byKey.values();
  }
}

/**
 * The permits of a process: any number per key. None is an excluder, even a write permit: the store decides
 * who fits beside it, so a waiter of the key always asks the store.
 */
export class HeldPermits implements HeldLeases {
  private readonly permits = new Set<Lock>();

  get size(): number {
    return this.permits.size;
  }

  add(lock: Lock): void {
    this.permits.add(lock);
  }

  delete(lock: Lock): void {
    this.permits.delete(lock);
  }

  has(lock: Lock): boolean {
    return this.permits.has(lock);
  }

  excluderOf(): undefined {
    return undefined;
  }

  [Symbol.iterator](): Iterator<Lock> {
    return this.permits.values();
  }
}
