/** Injection token of the {@link Storage} the sample keeps its data in. */
export const STORAGE = Symbol('STORAGE');

/** The outcome of {@link Storage.appendFenced}. */
export interface FencedWrite {
  /** Whether the entry was stored. */
  readonly accepted: boolean;
  /** The highest fence the list has accepted, this write included. */
  readonly highest: number;
}

/**
 * The sample's data: stock, balances, report runs, ledger entries. Redis when there is one, else this
 * process's memory. Deliberately plain get/set, so the read-modify-writes the locks protect are visible.
 */
export interface Storage {
  get(key: string): Promise<string | null>;
  /** Sets every key of `values` in one atomic step. */
  set(values: Record<string, string>): Promise<void>;
  /** Appends `value` to the list at `key`. */
  append(key: string, value: string): Promise<void>;
  /** The whole list at `key`, oldest first. */
  list(key: string): Promise<string[]>;
  /**
   * Appends `value` to the list at `key` unless a write with a higher fence already reached it: the
   * check and the write are one atomic step, as in `UPDATE ... WHERE fence <= $fence` in SQL.
   */
  appendFenced(key: string, fence: number, value: string): Promise<FencedWrite>;
  close(): Promise<void>;
}
