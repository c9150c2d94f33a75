/**
 * The hand-off window of a store that sets none, in ms: how long a contended release reserves the key (or a
 * freed permit) for the waiter first in line. Every family with a line starts from it.
 */
export const DEFAULT_HANDOFF_WINDOW = 20;
