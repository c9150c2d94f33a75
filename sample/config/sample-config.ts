import { hostname } from 'node:os';
import { findLocalRedis } from './find-local-redis.js';

/** Where the sample keeps locks and data, and how this instance presents itself. */
export class SampleConfig {
  /** The Redis that locks and data live in; `undefined`: this process only (memory). */
  readonly redisUrl?: string;
  /** HTTP port; `0` picks a free one. @default 3000 */
  readonly port: number;
  /** Names this instance in responses and report runs. @default `<hostname>-<pid>` */
  readonly instanceId: string;
  /** Whether the app takes locks at all; `LOCKS=off` builds it without them, for the demo's comparison run. */
  readonly locks: boolean;
  /** Namespace of every Redis key of the sample, locks included. @default 'sample:' */
  readonly keyPrefix: string;

  constructor(values: Partial<SampleConfig> = {}) {
    this.redisUrl = values.redisUrl;
    this.port = values.port ?? 3000;
    this.instanceId = values.instanceId ?? `${hostname()}-${process.pid}`;
    this.locks = values.locks ?? true;
    this.keyPrefix = values.keyPrefix ?? 'sample:';
  }

  /**
   * Reads `REDIS_URL`, `PORT`, `INSTANCE_ID`, `LOCKS` (`on` | `off`) and `KEY_PREFIX`. Without
   * `REDIS_URL`, uses a Redis on `localRedis` if one answers a PING at once, else memory.
   * @throws Error naming the variable when a value cannot work
   */
  static async fromEnvironment(
    env: NodeJS.ProcessEnv = process.env,
    localRedis = 'redis://127.0.0.1:6379',
  ): Promise<SampleConfig> {
    const port = Number(env.PORT ?? 3000);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new Error(`PORT must be a port number (0 picks a free one); got "${env.PORT}"`);
    }
    const locks = (env.LOCKS ?? 'on').toLowerCase();
    if (locks !== 'on' && locks !== 'off') throw new Error(`LOCKS must be "on" or "off"; got "${env.LOCKS}"`);
    const redisUrl = env.REDIS_URL || ((await findLocalRedis(localRedis)) ? localRedis : undefined);
    return new SampleConfig({
      redisUrl,
      port,
      instanceId: env.INSTANCE_ID || undefined,
      locks: locks === 'on',
      keyPrefix: env.KEY_PREFIX || undefined,
    });
  }
}
