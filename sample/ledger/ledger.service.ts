import { Inject, Injectable } from '@nestjs/common';
import { SampleConfig } from '../config/sample-config.js';
import { STORAGE, type Storage } from '../storage/storage.js';
import { StaleFenceError } from './stale-fence.error.js';

/** One line of an account's ledger, with the fence of the lock it was written under. */
export interface LedgerEntry {
  readonly text: string;
  readonly fence: number;
  readonly instance: string;
}

const ledgerKey = (account: string): string => `ledger:${account}`;

/**
 * The resource that checks fences. A lock alone cannot stop a writer that paused (GC, swap, a slow
 * call) until its lease expired and another writer took over: the paused one still believes it holds the
 * lock. So every write carries the fence of its lease, and the ledger, in the same atomic step as the
 * write, refuses a fence lower than the highest it has accepted.
 */
@Injectable()
export class LedgerService {
  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly config: SampleConfig,
  ) {}

  /** @throws StaleFenceError (409) when a write with a higher fence already reached this ledger */
  async write(account: string, fence: number, text: string): Promise<LedgerEntry> {
    const entry: LedgerEntry = { text, fence, instance: this.config.instanceId };
    const { accepted, highest } = await this.storage.appendFenced(ledgerKey(account), fence, JSON.stringify(entry));
    if (!accepted) throw new StaleFenceError(account, fence, highest);
    return entry;
  }

  async entries(account: string): Promise<LedgerEntry[]> {
    return (await this.storage.list(ledgerKey(account))).map((line) => JSON.parse(line) as LedgerEntry);
  }
}
