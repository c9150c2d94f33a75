/**
 * The lock key a leadership's lease is held under: `leader:<name>`, beside the application's own keys (under
 * the store's `keyPrefix`). `inspect(leaderKey(name))` reads it as any lock; `inspectLeader(name)` says it in
 * a leader's words.
 */
export function leaderKey(name: string): string {
  return `leader:${name}`;
}
