import { performance } from 'node:perf_hooks';
import type { ResponseRecords } from '../../interfaces/response-records.interface.js';

interface MemoryRecord {
  readonly value: string;
  readonly expiresAt: number;
}

/**
 * Response records inside one process. A record past its ttl is gone for `get` at once; it is dropped when a
 * later `put` finds it at the old end of the map (records of one ttl leave in the order they came), so the
 * map holds about what was kept within the longest ttl, with no timer per record.
 */
export class MemoryRecords implements ResponseRecords {
  private readonly records = new Map<string, MemoryRecord>();

  async put(key: string, value: string, ttl: number): Promise<boolean> {
    const now = performance.now();
    this.dropExpired(now);
    const current = this.records.get(key);
    if (current && current.expiresAt > now) return false;
    // re-inserted at the young end, so the oldest records stay first
    this.records.delete(key);
    this.records.set(key, { value, expiresAt: now + ttl });
    return true;
  }

  async get(key: string): Promise<string | undefined> {
    const record = this.records.get(key);
    if (!record) return undefined;
    if (record.expiresAt > performance.now()) return record.value;
    this.records.delete(key);
    return undefined;
  }

  async delete(key: string): Promise<void> {
    this.records.delete(key);
  }

  /** Forgets every record (the store closes). */
  clear(): void {
    this.records.clear();
  }

  private dropExpired(now: number): void {
    for (const [key, record] of this.records) {
      if (record.expiresAt > now) return;
      this.records.delete(key);
    }
  }
}
