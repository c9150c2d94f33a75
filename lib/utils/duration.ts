/** A duration: whole milliseconds, or a string such as `'500ms'`, `'30s'`, `'5m'`, `'1h'`. */
export type Duration = number | string;

/** Timers in Node overflow past 2^31-1 ms and fire at once; no duration may exceed it. */
export const MAX_DURATION = 2_147_483_647;
