/**
 * The ACL rules of a Redis user that may do everything the module does and nothing more, as docs/stores.md's
 * "Running Redis for locks" lists them: keys and channels under `prefix`, the scripts and the commands they
 * call, the direct reads, pub/sub for release notices and what the startup checks and `replicaAck` send.
 */
export function lockUserRules(prefix: string): string[] {
  const commands = [
    ...['evalsha', 'eval', 'script|load', 'script|exists'],
    ...[
      'get',
      'set',
      'del',
      'pexpire',
      'pttl',
      'time',
      'lpop',
      'llen',
      'rpush',
      'lset',
      'lrem',
      'lindex',
      'hset',
      'mget',
      'lrange',
    ],
    ...['hexists'],
    ...['publish', 'spublish', 'subscribe', 'ssubscribe', 'unsubscribe', 'sunsubscribe'],
    ...['ping', 'info', 'config|get', 'wait'],
  ];
  return ['resetkeys', `~${prefix}*`, 'resetchannels', `&${prefix}*`, '-@all', ...commands.map((name) => `+${name}`)];
}
