import { CommandDeadlines, type DeadlineCommand } from '../command-deadlines.js';
import { commandTimeoutOf, isCluster } from './port-settings.js';
import type { RedisClientPort, RedisClientSettings } from './redis-client-port.js';

/**
 * How long the store waits for an answer on an ioredis or iovalkey client of yours that has no `commandTimeout`:
 * the module's default for the clients it makes, and its bound on node-redis commands.
 */
export const UNTIMED_CLIENT_COMMAND_TIMEOUT = 2000;

/** The port's commands that answer with a promise: each is bounded. */
const COMMANDS = new Set<PropertyKey>([
  'evalsha',
  'eval',
  'set',
  'get',
  'mget',
  'del',
  'llen',
  'hexists',
  'scan',
  'script',
  'config',
  'info',
  'ping',
  'subscribe',
  'unsubscribe',
  'ssubscribe',
  'sunsubscribe',
]);

/**
 * The store's port on an ioredis or iovalkey client of yours: the client as it is when it has a
 * `commandTimeout`, else a view of it whose every command the store sends gives up after
 * {@link UNTIMED_CLIENT_COMMAND_TIMEOUT} ms with ioredis' own "Command timed out". Without it a frozen server
 * (SIGSTOP, a paused VM, a partition that drops no connection) would keep an acquire waiting for ever, its
 * `wait` included. The client itself is left as it is: your own commands on it keep your settings, and the
 * view's `options` say the bound so that errors and checks name it.
 */
export function boundedIoredisPort(client: RedisClientPort): RedisClientPort {
  if (commandTimeoutOf(client) !== undefined) return client;
  return boundedView(client, new CommandDeadlines(UNTIMED_CLIENT_COMMAND_TIMEOUT));
}

/** The client behind each bounded view. */
const clientsOfViews = new WeakMap<RedisClientPort, RedisClientPort>();

/**
 * The client itself behind a bounded view (else `port`), for a wait that has a longer deadline of its own: a
 * Cluster client's first command waits in its queue until it has learnt the slots, which the startup check
 * gives 10 s to report the Cluster's own error.
 */
export function unboundedClient(port: RedisClientPort): RedisClientPort {
  return clientsOfViews.get(port) ?? port;
}

/** `client` with its commands, pipelines, nodes and duplicates bounded by `deadlines`. */
function boundedView(client: RedisClientPort, deadlines: CommandDeadlines): RedisClientPort {
  const methods = new Map<PropertyKey, unknown>();
  const views = new WeakMap<RedisClientPort, RedisClientPort>();
  const viewOf = (node: RedisClientPort): RedisClientPort => {
    let view = views.get(node);
    if (!view) views.set(node, (view = boundedView(node, deadlines)));
    return view;
  };
  const options = boundedSettings(client);
  const view = new Proxy(client, {
    get(target, property) {
      if (property === 'options') return options;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = methods.get(property);
      if (method === undefined) {
        method = boundMethod(target, property, value as (...args: unknown[]) => unknown, deadlines, viewOf);
        methods.set(property, method);
      }
      return method;
    },
  });
  clientsOfViews.set(view, client);
  return view;
}

function boundMethod(
  target: RedisClientPort,
  property: PropertyKey,
  method: (...args: unknown[]) => unknown,
  deadlines: CommandDeadlines,
  viewOf: (node: RedisClientPort) => RedisClientPort,
): unknown {
  if (COMMANDS.has(property)) {
    return (...args: unknown[]) => bounded(method.apply(target, args) as Promise<unknown>, deadlines);
  }
  switch (property) {
    case 'pipeline':
      return () => boundedPipeline(method.call(target) as object, deadlines);
    case 'nodes':
      return (...args: unknown[]) => (method.apply(target, args) as RedisClientPort[]).map(viewOf);
    case 'duplicate':
      // the store's subscriber: its SUBSCRIBE waits on the same server
      return (...args: unknown[]) => boundedView(method.apply(target, args) as RedisClientPort, deadlines);
    default:
      return method.bind(target);
  }
}

/** The client's settings with the bound as its `commandTimeout` (a Cluster's in its `redisOptions`). */
function boundedSettings(client: RedisClientPort): RedisClientSettings {
  const withTimeout = <T extends object>(settings: T): T =>
    new Proxy(settings, {
      get: (target, property): unknown =>
        property === 'commandTimeout' ? UNTIMED_CLIENT_COMMAND_TIMEOUT : Reflect.get(target, property, target),
    });
  const settings = client.options;
  if (!isCluster(client)) return withTimeout(settings);
  const nodeSettings = withTimeout(settings.redisOptions ?? {});
  return new Proxy(settings, {
    get: (target, property): unknown =>
      property === 'redisOptions' ? nodeSettings : Reflect.get(target, property, target),
  });
}

/** A pipeline whose `exec()` is bounded; its other methods chain on the view. */
function boundedPipeline(pipeline: object, deadlines: CommandDeadlines): object {
  const view: object = new Proxy(pipeline, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'exec') return () => bounded(value.call(target) as Promise<unknown>, deadlines);
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        return result === target ? view : result;
      };
    },
  });
  return view;
}

/** `sent`, or a "Command timed out" rejection once `deadlines` says its time is up. */
function bounded<T>(sent: Promise<T>, deadlines: CommandDeadlines): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const call: { isSettled: boolean } & DeadlineCommand = {
      isSettled: false,
      reject(error) {
        call.isSettled = true;
        reject(error);
      },
    };
    deadlines.track(call);
    sent.then(
      (reply) => {
        call.isSettled = true;
        resolve(reply);
      },
      (error: unknown) => {
        call.isSettled = true;
        reject(error);
      },
    );
  });
}
