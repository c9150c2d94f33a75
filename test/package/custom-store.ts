// An application's own store, compiled by scripts/package-check.sh against the packed tarball (as store.mts and
// as store.cts) with `skipLibCheck: false`: the `nestjs-lock/store` entry gives everything a store implements.
import { LockManager, MemoryLockStore } from 'nestjs-lock';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  LockStore,
  ReleaseWatch,
} from 'nestjs-lock/store';

/** A store that counts the grants of the store it wraps. */
export class CountingStore implements LockStore {
  grants = 0;

  constructor(private readonly inner: LockStore) {}

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const result = await this.inner.acquire(request);
    if (result.acquired) this.grants++;
    return result;
  }

  release(key: string, token: string): Promise<boolean> {
    return this.inner.release(key, token);
  }

  extend(key: string, token: string, ttl: number): Promise<boolean> {
    return this.inner.extend(key, token, ttl);
  }

  extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    return this.inner.extendMany(renewals);
  }

  inspect(key: string): Promise<LockState> {
    return this.inner.inspect(key);
  }

  watch(key: string, since?: number): Promise<ReleaseWatch> {
    return this.inner.watch(key, since);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export async function countGrants(): Promise<number> {
  const store = new CountingStore(new MemoryLockStore());
  const manager = new LockManager({ store });
  await manager.using('report:daily', () => undefined);
  await manager.close();
  return store.grants;
}
