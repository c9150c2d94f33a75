import { IdempotencyKeyReusedError } from '../errors/idempotency-key-reused.error.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockLogger, LockSectionOptions } from '../interfaces/lock-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { ResponseRecords } from '../interfaces/response-records.interface.js';
import { decodeRecord, encodeRecord } from './idempotency-record.js';
import type { IdempotencySettings } from './idempotency-settings.js';
import { claimKeyOf, digestOf, recordKeyOf } from './record-key.js';

/** What an idempotent run needs of the lock manager: a locked section on the claim key, and its logger. */
export interface IdempotencyHost {
  readonly store: LockStore;
  readonly logger?: LockLogger;
  using<T>(key: string, fn: () => T | Promise<T>, options?: LockSectionOptions): Promise<T>;
}

/** The outcome of a first run, as the entry point sees it: a result, or what the work threw. */
export type RunOutcome<T> = { readonly result: T } | { readonly error: unknown };

/** One idempotent operation, as an entry point (`@Idempotent()`, `idempotent()`) describes it. */
export interface IdempotentWork<T> {
  /** The client's key. */
  readonly key: string;
  /** What keeps callers apart (`''`: none). */
  readonly scope: string;
  /** What the request is: a later request under the key must have the same. */
  readonly fingerprint: string;
  readonly settings: IdempotencySettings;
  /** Names the operation in lock events, metrics and messages (`Orders.create`); never the key. */
  readonly label: string;
  /** What clients call the key (`Idempotency-Key`), for messages. */
  readonly keyName: string;
  /** Where `maxBodyBytes` is given, for the refusal of an outcome too big to keep. */
  readonly option: string;
  /** Does the work, once per key. */
  run(): Promise<T>;
  /** The outcome in a form to keep, or `undefined` when it must not be kept (a retry then runs again). */
  encode(outcome: RunOutcome<T>): string | undefined;
  /** The kept outcome as this attempt answers it: a result, or a throw (a kept 4xx). */
  replay(outcome: string): T;
}

/** What an idempotent run answered with, and whether it was a replay of a kept outcome. */
export interface IdempotentAnswer<T> {
  readonly result: T;
  readonly replayed: boolean;
}

/**
 * The response records of `store` (`capabilities.records`), or a clear refusal naming the store and why.
 * @throws LockConfigurationError naming `option`, the store and `capabilities.absent.records`
 */
export function recordsOf(store: LockStore, option: string): ResponseRecords {
  const { records, absent } = store.capabilities ?? {};
  if (records) return records;
  const name = (store.constructor as { name?: string } | undefined)?.name ?? 'this store';
  const why = absent?.records ?? 'it keeps no response records (no `capabilities.records`)';
  throw new LockConfigurationError(option, name, `${name} cannot keep the responses of idempotent requests: ${why}`);
}

/**
 * Runs `work` once per key: a kept outcome is replayed (or refused with `IdempotencyKeyReusedError` for another
 * request); else the first request claims the key with a lock (renewed while it runs; a process that dies frees
 * it after the lock's ttl), runs, and keeps its outcome for `settings.ttl` before it lets go. A duplicate that
 * comes while the first runs waits up to `settings.wait` for the lock (then `LockNotAcquiredError`), and answers
 * with what the first kept, or runs itself when the first kept nothing (it failed).
 */
export async function runIdempotent<T>(host: IdempotencyHost, work: IdempotentWork<T>): Promise<IdempotentAnswer<T>> {
  const records = recordsOf(host.store, work.option);
  const recordKey = recordKeyOf(work.scope, work.key);
  const request = digestOf(work.fingerprint);
  const kept = await keptAnswer(records, recordKey, request, work);
  if (kept) return kept;
  const { label, settings } = work;
  return host.using(
    claimKeyOf(recordKey),
    async () => {
      // the first request may have finished between the read above and this claim
      const late = await keptAnswer(records, recordKey, request, work);
      if (late) return late;
      let result: T;
      try {
        result = await work.run();
      } catch (error) {
        await keep(host, records, recordKey, request, work, work.encode({ error }), false);
        throw error;
      }
      await keep(host, records, recordKey, request, work, work.encode({ result }), true);
      return { result, replayed: false };
    },
    { wait: settings.wait, label: `idempotent ${label}`, metricKey: `idempotency:${label}` },
  );
}

/** The answer kept under the key, if any; a record of another request is a refusal. */
async function keptAnswer<T>(
  records: ResponseRecords,
  recordKey: string,
  request: string,
  work: IdempotentWork<T>,
): Promise<IdempotentAnswer<T> | undefined> {
  const stored = await records.get(recordKey);
  if (stored === undefined) return undefined;
  const record = decodeRecord(stored);
  if (!record) {
    // written by a version that kept another form: this one cannot answer it, so the key starts over
    await records.delete(recordKey);
    return undefined;
  }
  if (record.request !== request) throw new IdempotencyKeyReusedError(work.keyName);
  return { result: work.replay(record.outcome), replayed: true };
}

/**
 * Keeps an outcome. One too big is refused: a result with a `LockConfigurationError` (so the first request says
 * so, instead of a silent non-replay later), a thrown error by a warning (the work's own error goes on). A store
 * that fails to keep it is a warning: the answer stands, and a retry would run again.
 */
async function keep<T>(
  host: IdempotencyHost,
  records: ResponseRecords,
  recordKey: string,
  request: string,
  work: IdempotentWork<T>,
  outcome: string | undefined,
  succeeded: boolean,
): Promise<void> {
  if (outcome === undefined) return;
  const value = encodeRecord({ request, outcome });
  const bytes = Buffer.byteLength(value);
  const { maxBodyBytes, ttl } = work.settings;
  if (bytes > maxBodyBytes) {
    const refusal = new LockConfigurationError(
      `${work.option}.maxBodyBytes`,
      maxBodyBytes,
      `the response of ${work.label} takes ${bytes} bytes to keep, more than maxBodyBytes; it ran but cannot be ` +
        'replayed, so a retry would run it again: raise maxBodyBytes or return less',
    );
    if (succeeded) throw refusal;
    host.logger?.warn(refusal.message);
    return;
  }
  try {
    await records.put(recordKey, value, ttl);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    host.logger?.warn(
      `The response of ${work.label} could not be kept (${reason}); a retry with the same ${work.keyName} would run again.`,
    );
  }
}
