import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Where a {@link FaultProxy} forwards to: a `redis://` URL or a host and port. */
export type FaultProxyTarget = string | { host?: string; port: number };

/** A TCP proxy in front of a server that a test can slow down, partition, cut and refuse. */
export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  /** The target URL with host and port replaced by the proxy's (credentials and database kept). */
  readonly url: string;
  /** Connections through the proxy whose client or server side is still open. */
  readonly connections: number;
  /** Delays every chunk by `ms` in each direction (a round trip takes at least twice as long); order is kept. */
  latency(ms: number): void;
  /**
   * Holds every byte in both directions from now on, like a network partition: connections stay open and
   * nothing arrives. {@link FaultProxy.heal} delivers what was held, in order, as TCP would after a partition,
   * so a command that timed out on the client may still run on the server.
   */
  blackhole(): void;
  /** Clears latency and blackhole and delivers every held or delayed byte at once; refusal is left as it is. */
  heal(): void;
  /** Destroys every open connection on both sides, as a crash of a middlebox would. */
  cutAll(): void;
  /**
   * Cuts the one connection that next carries a client chunk containing `marker` (e.g. the SHA1 of a Lua
   * script, to hit one kind of command): with `'request'` the chunk is dropped, so the server never sees it;
   * with `'reply'` it is delivered and the connection is cut when the server's answer arrives, so the
   * command ran but its reply is lost. Resolves when the cut happened; one cut per call.
   * @throws Error when a cut is already armed.
   */
  cutOn(marker: string, when: 'request' | 'reply'): Promise<void>;
  /**
   * Holds what the server sends on the one connection that next carries a client chunk containing `marker`,
   * from that chunk on, while its requests still go through: the request runs on the server and its answer
   * (and every later one on that connection) does not arrive, a lost reply. {@link FaultProxy.heal} delivers
   * them. Resolves once the marked chunk went through; shares the one armed slot of {@link FaultProxy.cutOn}.
   * @throws Error when a cut is already armed.
   */
  holdRepliesAfter(marker: string): Promise<void>;
  /**
   * Holds everything the one connection that next carries a client chunk containing `marker` sends to the
   * server, from that chunk on, and still passes the server's bytes to the client: a partition of that
   * connection alone, which the server sees open and silent (as when the client process froze after its
   * request before it). {@link FaultProxy.heal} delivers what was held. Resolves when the chunk was held; shares
   * the one armed slot of {@link FaultProxy.cutOn}.
   * @throws Error when a cut is already armed.
   */
  holdOn(marker: string): Promise<void>;
  /**
   * While on, the proxy stops listening so new connections fail with ECONNREFUSED; open ones keep working.
   * @throws Error when turning it off and the port was taken meanwhile.
   */
  refuse(on: boolean): Promise<void>;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/**
 * Starts a {@link FaultProxy} on a free port of 127.0.0.1 that forwards to `target`.
 * @example
 * const proxy = await startFaultProxy(testRedisUrl());
 * const redis = new Redis(proxy.url, { commandTimeout: 200 });
 * proxy.blackhole();
 * await expect(redis.ping()).rejects.toThrow(/timed out/);
 */
export async function startFaultProxy(target: FaultProxyTarget): Promise<FaultProxy> {
  const url = new URL(typeof target === 'string' ? target : 'redis://127.0.0.1');
  const targetHost = typeof target === 'string' ? url.hostname || '127.0.0.1' : (target.host ?? '127.0.0.1');
  const targetPort = typeof target === 'string' ? Number(url.port || 6379) : target.port;
  const links = new Set<Link>();
  const faults: Faults = { latencyMs: 0, blackholed: false };
  let armed: { marker: Buffer; when: 'request' | 'reply' | 'hold' | 'hold-replies'; done: () => void } | undefined;

  const onConnection = (client: Socket): void => {
    const server = connect({ port: targetPort, host: targetHost, allowHalfOpen: true });
    const link: Link = { client, server, toServer: new Pipe(server, faults), toClient: new Pipe(client, faults) };
    links.add(link);
    client.setNoDelay(true);
    server.setNoDelay(true);
    client.on('data', (chunk: Buffer) => {
      const cut = armed;
      if (cut && !link.cutOnReply && chunk.includes(cut.marker)) {
        armed = undefined;
        if (cut.when === 'request') {
          links.delete(link);
          destroyLink(link);
          cut.done();
          return;
        }
        if (cut.when === 'hold-replies' || cut.when === 'hold') {
          (cut.when === 'hold' ? link.toServer : link.toClient).hold();
          link.toServer.push(chunk);
          cut.done();
          return;
        }
        link.cutOnReply = cut.done;
      }
      link.toServer.push(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      const done = link.cutOnReply;
      if (done) {
        links.delete(link);
        destroyLink(link);
        done();
        return;
      }
      link.toClient.push(chunk);
    });
    client.on('end', () => link.toServer.push('end'));
    server.on('end', () => link.toClient.push('end'));
    const teardown = (): void => {
      links.delete(link);
      destroyLink(link);
    };
    // An error on either side is a broken connection for both; a clean close has already queued its 'end'.
    client.on('error', teardown);
    server.on('error', teardown);
    const forget = (): void => {
      if (client.destroyed && server.destroyed) links.delete(link);
    };
    client.on('close', forget);
    server.on('close', forget);
  };

  const listen = async (port: number): Promise<Server> =>
    new Promise((resolve, reject) => {
      const listener = createServer({ allowHalfOpen: true }, onConnection);
      listener.once('error', reject);
      listener.listen(port, '127.0.0.1', () => {
        listener.off('error', reject);
        resolve(listener);
      });
    });

  let listener: Server | undefined = await listen(0);
  const address = listener.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  url.hostname = '127.0.0.1';
  url.port = String(port);

  const stopListening = (): void => {
    const current = listener;
    listener = undefined;
    // close() only calls back once every accepted connection is gone, which is not what stopping to listen means.
    current?.close();
  };

  const cutAll = (): void => {
    for (const link of links) destroyLink(link);
    links.clear();
  };

  return {
    host: '127.0.0.1',
    port,
    url: url.href.replace(/\/$/, ''),
    get connections() {
      return links.size;
    },
    latency(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`Latency is a number of ms >= 0; got ${ms}.`);
      faults.latencyMs = ms;
    },
    blackhole() {
      faults.blackholed = true;
    },
    heal() {
      faults.latencyMs = 0;
      faults.blackholed = false;
      for (const link of links) {
        link.toServer.unhold();
        link.toServer.pump(true);
        link.toClient.unhold();
        link.toClient.pump(true);
      }
    },
    cutAll,
    cutOn(marker, when) {
      if (armed) return Promise.reject(new Error('A cut is already armed; await it before arming the next.'));
      return new Promise((resolve) => (armed = { marker: Buffer.from(marker), when, done: resolve }));
    },
    holdRepliesAfter(marker) {
      if (armed) return Promise.reject(new Error('A cut is already armed; await it before arming the next.'));
      return new Promise((resolve) => (armed = { marker: Buffer.from(marker), when: 'hold-replies', done: resolve }));
    },
    holdOn(marker) {
      if (armed) return Promise.reject(new Error('A cut is already armed; await it before arming the next.'));
      return new Promise((resolve) => (armed = { marker: Buffer.from(marker), when: 'hold', done: resolve }));
    },
    async refuse(on) {
      if (on) return stopListening();
      listener ??= await listen(port);
    },
    async close() {
      armed = undefined;
      stopListening();
      cutAll();
    },
  };
}

interface Faults {
  latencyMs: number;
  blackholed: boolean;
}

interface Link {
  client: Socket;
  server: Socket;
  toServer: Pipe;
  toClient: Pipe;
  /** Set once a request marked for a `'reply'` cut went through: the next server chunk ends the link. */
  cutOnReply?: () => void;
}

function destroyLink(link: Link): void {
  link.toServer.clear();
  link.toClient.clear();
  link.client.destroy();
  link.server.destroy();
}

/** One direction of a connection: chunks wait here until their delay has passed and no blackhole holds them. */
class Pipe {
  private readonly queue: Array<{ chunk: Buffer | 'end'; due: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  /** Set by {@link Pipe.hold}: nothing is written out until {@link Pipe.unhold}. */
  private held = false;

  constructor(
    private readonly destination: Socket,
    private readonly faults: Faults,
  ) {}

  push(chunk: Buffer | 'end'): void {
    const previous = this.queue.at(-1)?.due ?? 0;
    // A latency lowered mid-stream must not let a later chunk overtake an earlier one.
    this.queue.push({ chunk, due: Math.max(performance.now() + this.faults.latencyMs, previous) });
    this.pump();
  }

  /** Writes out what is due, or with `everything` all that is queued. */
  pump(everything = false): void {
    if (this.faults.blackholed || this.held) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && (everything || this.queue[0].due <= now)) {
      const { chunk } = this.queue.shift()!;
      if (this.destination.destroyed) continue;
      if (chunk === 'end') this.destination.end();
      else this.destination.write(chunk);
    }
    if (this.queue.length > 0) {
      // Timers may fire a fraction of a millisecond early; pump() checks again and waits out the rest.
      this.timer = setTimeout(() => this.pump(), Math.ceil(this.queue[0].due - now));
    }
  }

  /** Keeps every chunk queued from now on (a lost reply, a silent client), whatever the faults say. */
  hold(): void {
    this.held = true;
  }

  unhold(): void {
    this.held = false;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }
}
