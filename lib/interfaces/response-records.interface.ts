/**
 * Records a store keeps for a while beside its leases: the final responses of idempotent requests
 * (`@Idempotent()`, `LockService.idempotent()`). A key names one record; the caller hashes anything that
 * could carry user data into it, so keys and values are opaque to the store. Each operation touches one
 * key, so a Redis Cluster serves it from that key's slot.
 */
export interface ResponseRecords {
  /**
   * Keeps `value` under `key` for `ttl` ms unless a record is there already.
   * @returns whether it was kept (`false`: another record holds the key, and stays as it is)
   * @throws LockStoreError when the store fails
   */
  put(key: string, value: string, ttl: number): Promise<boolean>;
  /**
   * The record under `key`, or `undefined` when there is none (never kept, deleted, or its ttl ran out).
   * @throws LockStoreError when the store fails
   */
  get(key: string): Promise<string | undefined>;
  /**
   * Forgets the record under `key`, if any.
   * @throws LockStoreError when the store fails
   */
  delete(key: string): Promise<void>;
}
