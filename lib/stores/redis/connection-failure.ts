import type { RedisClientPort } from './client/redis-client-port.js';
import { describeFailureKind, failureKind, isNetworkError } from '../../utils/failure-kind.js';
import { commandTimeoutOf, isCluster } from './client/port-settings.js';
import { labelOfServer } from './node-label.js';
import { setTimeoutAfterReads } from '../../utils/timeout-after-reads.js';

/**
 * How long a command refused NOAUTH waits for the connection's own error: node-redis sends commands behind its
 * `AUTH` and may report that `AUTH`'s refusal (WRONGPASS) only after their answers.
 */
const AUTH_ERROR_GRACE = 500;

/** The watch on each client that has one: every store on that client (its permits too) tells failures by it. */
const watches = new WeakMap<RedisClientPort, ConnectionWatch>();

/**
 * The last connection error a client reported while watched. ioredis tells why it cannot connect
 * (`ECONNREFUSED`, `ETIMEDOUT`, an `AUTH` refused) only through `error` events; a command queued meanwhile
 * fails with "Reached the max retries per request limit", which says nothing of the cause.
 */
export class ConnectionWatch {
  /** The last error of the connection since it was last ready. */
  private lastError: unknown;
  /**
   * The last refusal of the connection's credentials (`WRONGPASS`) since it was last ready: the cause of what
   * fails after it, though the reconnects that follow report socket errors of their own (`ECONNRESET`).
   */
  private refusedAuth: unknown;
  private readonly onError = (error: unknown): void => {
    this.lastError = error;
    if (failureKind(error) === 'WRONGPASS') this.refusedAuth = error;
  };
  private readonly onReady = (): void => {
    this.lastError = undefined;
    this.refusedAuth = undefined;
  };

  constructor(private readonly client: RedisClientPort) {
    client.on('error', this.onError);
    client.on('ready', this.onReady);
    watches.set(client, this);
  }

  /**
   * The error behind a command's failure: the connection's own (`ECONNREFUSED`, a refused `AUTH`) when the
   * command only says it gave up or got no answer while the connection was failing.
   */
  causeOf(error: unknown): unknown {
    const kind = failureKind(error);
    if (kind === undefined || kind === 'not connected' || kind === 'timeout') {
      return this.refusedAuth ?? this.lastError ?? error;
    }
    // node-redis sends the commands behind a refused AUTH: the server answers them NOAUTH, or they meet the
    // connection it cuts after the refusal
    return mayFollowRefusedAuth(error, kind) ? (this.refusedAuth ?? error) : error;
  }

  /**
   * {@link causeOf}, once a command refused NOAUTH (or cut off with its socket) has given the connection up to
   * {@link AUTH_ERROR_GRACE} ms to report a refused password: the server's NOAUTH to a command sent behind a
   * wrong password is no cause, nor is the connection node-redis cuts after the refusal (seen on Node 22).
   */
  async settledCauseOf(error: unknown): Promise<unknown> {
    if (this.refusedAuth === undefined && mayFollowRefusedAuth(error)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          cancelGrace();
          this.client.off('error', heard);
          resolve();
        };
        // other errors (a reconnect's socket reset) may come first: only the refusal ends the grace early
        const heard = (): void => {
          if (this.refusedAuth !== undefined) done();
        };
        // judged after the sockets are read: a refusal that came during a stall of this process still counts
        const cancelGrace = setTimeoutAfterReads(done, AUTH_ERROR_GRACE);
        this.client.on('error', heard);
      });
    }
    return this.causeOf(error);
  }

  stop(): void {
    this.client.off('error', this.onError);
    this.client.off('ready', this.onReady);
    if (watches.get(this.client) === this) watches.delete(this.client);
  }
}

/**
 * Whether a command's failure may be the echo of a refused `AUTH` that the client has yet to report: answered
 * NOAUTH behind it, or cut off with the connection node-redis closes after it ("Socket closed unexpectedly",
 * `ECONNRESET`, `EPIPE`).
 */
function mayFollowRefusedAuth(error: unknown, kind = failureKind(error)): boolean {
  return (
    kind === 'NOAUTH' || kind === 'ECONNRESET' || kind === 'EPIPE' || /Socket closed unexpectedly/.test(String(error))
  );
}

/**
 * Why a server could not be used, in words: unreachable (`connection refused (ECONNREFUSED)`, a timeout,
 * `not connected`), authentication required (`NOAUTH`) or refused (`WRONGPASS`); `undefined` for any other
 * failure, which its own message describes.
 * @param commandTimeout the client's, to say how long it waited
 */
export function describeConnectionFailure(cause: unknown, commandTimeout?: number): string | undefined {
  const kind = failureKind(cause);
  if (kind === undefined) return undefined;
  if (kind === 'timeout')
    return `no answer${commandTimeout === undefined ? '' : ` within ${commandTimeout} ms`} (timeout)`;
  if (kind === 'not connected') return 'not connected (the command was given up while the client reconnected)';
  if (kind === 'NOAUTH') {
    return 'authentication required (NOAUTH): give the password (and user) in the URL or the client options';
  }
  if (kind === 'WRONGPASS') return 'the username or password was refused (WRONGPASS)';
  if (isNetworkError(cause)) return describeFailureKind(kind);
  return undefined;
}

/** A server that could not be used: the error that says why, and the words for it. */
export interface UnreachableServer {
  /** The connection's own error (`ECONNREFUSED`, a refused `AUTH`) when it is known, else the command's. */
  readonly cause: unknown;
  /** `cannot reach Redis at host:port: connection refused (ECONNREFUSED)`, never credentials. */
  readonly detail: string;
}

/**
 * A command's failure on `client` in the words of the startup check, when the server could not be used (not
 * reachable, no answer in time, authentication refused): which server (`host:port`) and why (from the client's
 * watch, when a store that owns it keeps one), instead of the client's own text ("Reached the max retries per
 * request limit", which names neither); `undefined` for any other failure, which its own message describes.
 */
export function unreachableServer(client: RedisClientPort, error: unknown): UnreachableServer | undefined {
  const cause = watches.get(client)?.causeOf(error) ?? error;
  const why = describeConnectionFailure(cause, commandTimeoutOf(client));
  if (why === undefined) return undefined;
  const server = isCluster(client) ? 'the Redis Cluster' : `Redis at ${labelOfServer(client)}`;
  return { cause, detail: `cannot reach ${server}: ${why}` };
}
