/** Options of `checkLockStore`. */
export interface LockStoreCheckOptions {
  /** Report the store down when it has not answered within this many ms. @default 1000 */
  readonly timeout?: number;
}
