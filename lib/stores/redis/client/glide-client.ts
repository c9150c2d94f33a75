/** A GLIDE client's connection settings, as it keeps them (`GlideClientConfiguration`); never logged. */
export interface GlideSettings {
  readonly addresses?: ReadonlyArray<{ readonly host?: string; readonly port?: number }>;
  /** ms a command may take before GLIDE gives it up. */
  readonly requestTimeout?: number;
  readonly [setting: string]: unknown;
}

/** How a GLIDE command is sent: the node it goes to on a cluster, and how its reply is decoded. */
export interface GlideCommandOptions {
  readonly route?:
    | { readonly type: 'primarySlotKey'; readonly key: string }
    | { readonly type: 'routeByAddress'; readonly host: string; readonly port: number }
    | 'randomNode';
  readonly decoder?: number;
}

/** A message a GLIDE subscriber hears (`PubSubMsg`). */
export interface GlideMessage {
  readonly channel: unknown;
  readonly message: unknown;
}

/**
 * The part of a Valkey GLIDE 2.x `GlideClient` or `GlideClusterClient` the port uses, by shape: the package
 * is never imported, so the store builds and runs without it. `config`, `requestTimeout` and `isClosed` are
 * not public in GLIDE's typings but are set on every instance: the subscriber connection is made from them.
 */
export interface GlideClient {
  customCommand(args: string[], options?: GlideCommandOptions): Promise<unknown>;
  subscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  unsubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  unsubscribeLazy?(channels: Iterable<string>): Promise<void>;
  /** Only on a `GlideClusterClient`. */
  ssubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  sunsubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  sunsubscribeLazy?(channels: Iterable<string>): Promise<void>;
  close(): void;
  readonly isClosed?: boolean;
  readonly config?: GlideSettings;
  readonly requestTimeout?: number;
}

/** GLIDE's `Decoder.String`: replies as strings whatever the client's `defaultDecoder`. */
export const STRING_DECODER = 1;

/** GLIDE's `ProtocolVersion.RESP3`, which its pub/sub requires. */
const RESP3 = 0;

/** Whether `client` is a `GlideClusterClient` (only it has sharded pub/sub). */
export function isGlideCluster(client: GlideClient): boolean {
  return typeof client.ssubscribe === 'function';
}

/** Whether `client` keeps the settings a subscriber connection is made from (GLIDE 2.x does). */
export function hasGlideSettings(client: object): boolean {
  const settings = (client as { config?: GlideSettings }).config;
  return typeof settings === 'object' && settings !== null && Array.isArray(settings.addresses);
}

/**
 * A new connection of the same class as `client`, to the same servers with the same credentials, TLS and
 * timeouts, whose messages go to `onMessage`. GLIDE 2.x delivers pub/sub messages only to a callback set when
 * the client is made, so the store's notices need a client of their own; it is created by the class's own
 * `createClient`, with RESP3 (which GLIDE's pub/sub needs), no client-side cache and no subscriptions of the
 * user's. The caller closes it.
 */
export function createGlideSubscriber(
  client: GlideClient,
  onMessage: (channel: string, message: string) => void,
): Promise<GlideClient> {
  const factory = client.constructor as { createClient?(settings: GlideSettings): Promise<GlideClient> };
  if (typeof factory.createClient !== 'function') {
    return Promise.reject(new Error('the GLIDE client has no createClient of its class to copy it with'));
  }
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- left out of the copy on purpose
  const { clientSideCache, pubsubSubscriptions, ...settings } = client.config ?? {};
  return factory.createClient({
    ...settings,
    protocol: RESP3,
    lazyConnect: false,
    pubsubSubscriptions: {
      channelsAndPatterns: {},
      callback: (message: GlideMessage) => onMessage(String(message.channel), String(message.message)),
    },
  });
}
