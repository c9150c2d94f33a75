import { BadRequestException, Body, Controller, Get, Param, Post } from '@nestjs/common';
import { LockService, WithLock, type Lock } from 'nestjs-lock';
import { LedgerService, type LedgerEntry } from './ledger.service.js';

/** What happened to each writer in {@link LedgerController.staleWriter}. */
export interface StaleWriterOutcome {
  readonly a: { readonly fence: number; readonly accepted: boolean; readonly refusal?: string };
  readonly b: { readonly fence: number; readonly accepted: boolean };
  readonly entries: LedgerEntry[];
}

/** A ledger per account whose writes carry fencing tokens. */
@Controller('ledger')
export class LedgerController {
  constructor(
    private readonly ledger: LedgerService,
    private readonly locks: LockService,
  ) {}

  @Get(':account')
  entries(@Param('account') account: string): Promise<LedgerEntry[]> {
    return this.ledger.entries(account);
  }

  /** Writes one entry under the account's lock; `fencing: true` grants the lease a fence to write with. */
  @Post(':account/entries')
  @WithLock('ledger:<account>', { fencing: true, wait: '3s' })
  write(@Param('account') account: string, @Body() body: { text?: unknown }): Promise<LedgerEntry> {
    if (typeof body?.text !== 'string' || body.text === '') throw new BadRequestException('"text" must be a string.');
    const lock = this.locks.current() as Lock;
    return this.ledger.write(account, lock.fence as number, body.text);
  }

  /**
   * Plays the failure that fencing is for, in order: writer A takes the lock, then pauses until its
   * lease has expired; writer B takes the lock (with a higher fence) and writes; A resumes, unaware, and
   * writes with its old fence. The ledger refuses A's write.
   */
  @Post(':account/stale-writer')
  async staleWriter(@Param('account') account: string): Promise<StaleWriterOutcome> {
    const key = `ledger:${account}`;
    const a = await this.locks.acquire(key, { ttl: 200, fencing: true, wait: '3s' });
    // A's pause: a GC pause or a slow call outlasts its 200 ms lease, which nothing renews
    await lost(a);
    const b = await this.locks.using(
      key,
      (lock) => this.ledger.write(account, lock.fence as number, 'written by B, which took the lock over'),
      { fencing: true, wait: '3s' },
    );
    const refusal = await this.ledger.write(account, a.fence as number, 'written by A after its lease expired').then(
      () => undefined,
      (error: Error) => error.message,
    );
    await a.release(); // resolves false: the lease was gone, and B's is untouched
    return {
      a: { fence: a.fence as number, accepted: refusal === undefined, refusal },
      b: { fence: b.fence, accepted: true },
      entries: await this.ledger.entries(account),
    };
  }
}

/** Resolves once the lock's lease is lost (its `signal` aborts with the reason). */
function lost(lock: Lock): Promise<void> {
  if (lock.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => lock.signal.addEventListener('abort', () => resolve(), { once: true }));
}
