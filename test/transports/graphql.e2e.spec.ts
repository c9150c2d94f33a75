import { fileURLToPath } from 'node:url';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { startRedisServer } from '../support/redis-server.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import type { LogEntry } from './fixtures/captured-logger.js';

const server = fileURLToPath(new URL('./fixtures/graphql-server.ts', import.meta.url));

interface GraphQLResponse {
  readonly status: number;
  readonly body: unknown;
}

/** The GraphQL fixture server in its own process, over real HTTP. */
class GraphQLServer {
  private constructor(
    private readonly child: ChildHandle,
    private readonly url: string,
  ) {}

  static async start(kind: string, redisUrl: string): Promise<GraphQLServer> {
    const child = startChild(server, { SERVER: kind, REDIS_URL: redisUrl, KEY_PREFIX: uniquePrefix() });
    await child.waitFor('listening', 60_000);
    return new GraphQLServer(child, /listening (\S+)/.exec(child.output())![1]);
  }

  async request(query: string, headers: Record<string, string> = {}): Promise<GraphQLResponse> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, body: await response.json() };
  }

  /** Where the server's output is now, to wait for what it prints after. */
  mark(): number {
    return this.child.output().length;
  }

  /** Resolves once a locked resolver entered its section after `mark`. */
  inside(mark: number): Promise<void> {
    return this.child.waitFor('entered', 20_000, mark);
  }

  /** Lets the resolvers inside finish. */
  open(): void {
    this.child.send('open');
  }

  /** How often each locked resolver ran, and what the server logged at ERROR. */
  async report(): Promise<{
    runs: { purchase: number; stock: number; checkout: number; balance: number };
    errors: LogEntry[];
  }> {
    const before = this.mark();
    this.child.send('report');
    await this.child.waitFor('report ', 20_000, before);
    const line = this.child
      .output()
      .slice(before)
      .split('\n')
      .find((l) => l.startsWith('report '))!;
    return JSON.parse(line.slice('report '.length));
  }

  close(): Promise<void> {
    return this.child.kill('SIGTERM');
  }
}

const LOCKED_MESSAGE = 'Resource "inventory:<productId>" is locked by another operation; retry later.';

/**
 * One server of each kind on the shared Redis, started on first use and stopped after the file: the describes
 * that use it each lock on resolvers of their own, so their counts and what they hold never meet, and each kind
 * boots once instead of once per describe.
 */
const servers = new Map<string, Promise<GraphQLServer>>();
function serverOf(kind: string): Promise<GraphQLServer> {
  let server = servers.get(kind);
  if (!server) servers.set(kind, (server = GraphQLServer.start(kind, testRedisUrl())));
  return server;
}

afterAll(async () => {
  // a server that failed to start failed its describes already
  await Promise.all(
    [...servers.values()].map((server) =>
      server.then(
        (started) => started.close(),
        () => undefined,
      ),
    ),
  );
});

describe.each(['apollo', 'mercurius'])('@WithLock on GraphQL resolvers (%s)', (kind) => {
  let graphql: GraphQLServer;

  beforeAll(async () => {
    graphql = await serverOf(kind);
  }, 60_000);

  it('answers the second of two concurrent mutations on one key with a LOCKED error on its field, and leaves the rest of the response alone', async () => {
    const mark = graphql.mark();
    const first = graphql.request('mutation { purchase(productId: "p1") { productId } }');
    await graphql.inside(mark);

    const second = await graphql.request('mutation { purchase(productId: "p1") { productId } note(text: "x") }');
    graphql.open();

    expect(second).toEqual({
      status: 200,
      body: {
        data: { purchase: null, note: 'noted x' },
        errors: [
          {
            message: LOCKED_MESSAGE,
            locations: [{ line: 1, column: 12 }],
            path: ['purchase'],
            // no stacktrace, no resolved key: the code, the retry hint and the key template
            extensions: { code: 'LOCKED', resource: 'inventory:<productId>', retryAfter: expect.any(Number) },
          },
        ],
      },
    });
    const { retryAfter } = (second.body as { errors: Array<{ extensions: { retryAfter: number } }> }).errors[0]
      .extensions;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(await first).toEqual({ status: 200, body: { data: { purchase: { productId: 'p1' } } } });
    const { runs, errors } = await graphql.report();
    expect(runs.purchase).toBe(1);
    expect(errors).toEqual([]);
  });

  it('answers a query whose key is held the same way', async () => {
    const mark = graphql.mark();
    const first = graphql.request('{ stock(productId: "p2") }');
    await graphql.inside(mark);

    const second = await graphql.request('{ stock(productId: "p2") ping }');
    graphql.open();

    expect(second).toEqual({
      status: 200,
      body: {
        data: { stock: null, ping: 'pong' },
        errors: [
          {
            message: 'Resource "stock-count:<productId>" is locked by another operation; retry later.',
            locations: [{ line: 1, column: 3 }],
            path: ['stock'],
            extensions: { code: 'LOCKED', resource: 'stock-count:<productId>', retryAfter: expect.any(Number) },
          },
        ],
      },
    });
    expect(await first).toEqual({ status: 200, body: { data: { stock: 2 } } });
    const { runs, errors } = await graphql.report();
    expect(runs.stock).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe.each(['apollo', 'mercurius'])(
  'a @ResolveField under @WithLock, which Nest runs without global interceptors by default (%s)',
  (kind) => {
    let graphql: GraphQLServer;

    beforeAll(async () => {
      graphql = await serverOf(kind);
    }, 60_000);

    it('answers a field whose key is held with a LOCKED error on that field, naming the template only, and logs no error', async () => {
      const query = '{ account(id: "acct-7731") { id balance } }';
      const mark = graphql.mark();
      const first = graphql.request(query);
      await graphql.inside(mark);

      const second = await graphql.request(query);
      graphql.open();

      const body = second.body as { data: unknown; errors: unknown[] };
      expect(second.status).toBe(200);
      expect(body.data).toEqual({ account: { id: 'acct-7731', balance: null } });
      expect(body.errors).toEqual([
        {
          message: 'Resource "balance:<account.id>" is locked by another operation; retry later.',
          locations: [{ line: 1, column: 33 }],
          path: ['account', 'balance'],
          // with Apollo's includeStacktraceInErrorResponses, the frames of graphql-js that placed it on its field
          extensions: expect.objectContaining({
            code: 'LOCKED',
            resource: 'balance:<account.id>',
            retryAfter: expect.any(Number),
          }),
        },
      ]);
      expect(JSON.stringify(body.errors)).not.toContain('acct-7731');
      expect(await first).toEqual({ status: 200, body: { data: { account: { id: 'acct-7731', balance: 9 } } } });
      const { runs, errors } = await graphql.report();
      expect(runs.balance).toBe(1);
      expect(errors).toEqual([]);
    });
  },
);

describe.each(['apollo', 'mercurius'])('a GraphQL resolver keyed by <user.id> (%s)', (kind) => {
  let graphql: GraphQLServer;

  beforeAll(async () => {
    graphql = await serverOf(kind);
  }, 60_000);

  it("reads the user a guard put on the context's request: one checkout per user at a time, other users go on", async () => {
    const checkout = 'mutation { checkout(item: "book") }';
    const mark = graphql.mark();
    const first = graphql.request(checkout, { 'x-user': 'u1' });
    await graphql.inside(mark);

    const sameUser = await graphql.request(checkout, { 'x-user': 'u1' });
    const otherMark = graphql.mark();
    const otherUser = graphql.request(checkout, { 'x-user': 'u2' });
    await graphql.inside(otherMark);
    graphql.open();

    expect(sameUser).toEqual({
      status: 200,
      body: {
        data: { checkout: null },
        errors: [
          {
            message: 'Resource "cart:<user.id>" is locked by another operation; retry later.',
            locations: [{ line: 1, column: 12 }],
            path: ['checkout'],
            extensions: { code: 'LOCKED', resource: 'cart:<user.id>', retryAfter: expect.any(Number) },
          },
        ],
      },
    });
    expect(await first).toEqual({ status: 200, body: { data: { checkout: 'checked out book' } } });
    expect(await otherUser).toEqual({ status: 200, body: { data: { checkout: 'checked out book' } } });
    const { runs, errors } = await graphql.report();
    expect(runs.checkout).toBe(2);
    expect(errors).toEqual([]);
  });
});

describe.each(['apollo', 'mercurius'])('a GraphQL resolver when the lock store is down (%s)', (kind) => {
  it('gets an error of its own code, LOCK_UNAVAILABLE, with a retry hint', async () => {
    const redis = await startRedisServer();
    const graphql = await GraphQLServer.start(kind, redis.url);
    try {
      await redis.stop();
      const response = await graphql.request('mutation { purchase(productId: "p3") { productId } note(text: "y") }');
      expect(response).toEqual({
        status: 200,
        body: {
          data: { purchase: null, note: 'noted y' },
          errors: [
            {
              message: 'The lock store is unavailable; retry later.',
              locations: [{ line: 1, column: 12 }],
              path: ['purchase'],
              extensions: { code: 'LOCK_UNAVAILABLE', resource: 'inventory:<productId>', retryAfter: 1 },
            },
          ],
        },
      });
      expect((await graphql.report()).runs.purchase).toBe(0);
    } finally {
      await graphql.close();
      await redis.stop();
    }
  }, 60_000);
});
