import type { FencedWrite, Storage } from './storage.js';

/** {@link Storage} in this process's memory, for running the sample without Redis. */
export class MemoryStorage implements Storage {
  private readonly values = new Map<string, string>();
  private readonly lists = new Map<string, string[]>();

  async get(key: string): Promise<string | null> {
    return this.values.get(key) ?? null;
  }

  async set(values: Record<string, string>): Promise<void> {
    for (const [key, value] of Object.entries(values)) this.values.set(key, value);
  }

  async append(key: string, value: string): Promise<void> {
    this.lists.set(key, [...(this.lists.get(key) ?? []), value]);
  }

  async list(key: string): Promise<string[]> {
    return [...(this.lists.get(key) ?? [])];
  }

  async appendFenced(key: string, fence: number, value: string): Promise<FencedWrite> {
    const highest = Number(this.values.get(`${key}:fence`) ?? 0);
    if (fence < highest) return { accepted: false, highest };
    this.values.set(`${key}:fence`, String(fence));
    await this.append(key, value);
    return { accepted: true, highest: fence };
  }

  async close(): Promise<void> {}
}
