import {
  Controller,
  Injectable,
  Module,
  Param,
  Post,
  Body,
  Query,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { LockConfigurationError, LockModule, LockService, WithLock } from '../../lib/index.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { createApp, startApp, type Platform } from '../support/nest-app/create-app.js';
import {
  HeaderUserGuard,
  KeySourcesController,
  Sections,
  type Entered,
} from '../support/nest-app/key-sources.controller.js';

/** One request of a race: what to send where. */
interface Send {
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** How a race went: each response's status and body, and how many sections were inside at once at most. */
interface Outcome {
  readonly statuses: number[];
  readonly answers: Array<Entered | { statusCode: number }>;
  readonly max: number;
}

describe.each<Platform>(['express', 'fastify'])('where @WithLock keys come from, over HTTP on %s', (platform) => {
  let app: INestApplication;
  let url: string;
  let sections: Sections;
  let locks: LockService;

  beforeAll(async () => {
    @Module({
      imports: [LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix() })],
      controllers: [KeySourcesController],
      providers: [Sections, HeaderUserGuard],
    })
    class KeySourcesModule {}
    ({ app, url } = await startApp(platform, KeySourcesModule));
    sections = app.get(Sections);
    locks = app.get(LockService);
  });

  afterAll(() => app.close());

  const send = ({ path, body, headers }: Send) =>
    fetch(`${url}/keys/${path}`, {
      method: 'POST',
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /**
   * Sends the requests at once and keeps every one that gets into its section there until all of them are
   * inside together or one has answered (a 409 from its lock, say); then lets them finish. `whileInside`
   * runs before they are let go.
   */
  async function race(requests: Send[], whileInside?: () => Promise<void>): Promise<Outcome> {
    sections.reset();
    const responses = requests.map(send);
    const answered = Promise.race(responses.map((response) => response.then(() => 'answered' as const)));
    await Promise.race([answered, sections.together(requests.length)]);
    try {
      await whileInside?.();
    } finally {
      sections.open();
    }
    const settled = await Promise.all(responses);
    return {
      statuses: settled.map((response) => response.status),
      answers: await Promise.all(settled.map((response) => response.json() as Promise<Entered>)),
      max: sections.max,
    };
  }

  /** The one request of a race that got into its section. */
  const holder = (outcome: Outcome) => outcome.answers[outcome.statuses.indexOf(201)] as Entered;

  it('locks the body field a handler takes, whatever the query says: one holder for ?sku=x1 and ?sku=x2', async () => {
    const outcome = await race([
      { path: 'buy?sku=x1', body: { sku: 'A' } },
      { path: 'buy?sku=x2', body: { sku: 'A' } },
    ]);
    expect(outcome.max).toBe(1);
    expect(outcome.statuses.sort()).toEqual([201, 409]);
    expect(holder(outcome)).toEqual({ key: 'inventory:A', received: ['A'] });
  });

  it('locks argument <0>, never a query field named 0: one holder for ?0=x1 and ?0=x2', async () => {
    const outcome = await race([
      { path: 'buy-first?0=x1', body: { sku: 'A' } },
      { path: 'buy-first?0=x2', body: { sku: 'A' } },
    ]);
    expect(outcome.max).toBe(1);
    expect(outcome.statuses.sort()).toEqual([201, 409]);
    expect(holder(outcome).key).toBe('inventory:A');
  });

  it('locks the parameter bound to the route param, whatever ?docId says: one holder per document', async () => {
    const outcome = await race([{ path: 'doc/d1?docId=x1' }, { path: 'doc/d1?docId=x2' }]);
    expect(outcome.max).toBe(1);
    expect(outcome.statuses.sort()).toEqual([201, 409]);
    expect(holder(outcome)).toEqual({ key: 'doc:d1', received: ['d1'] });
  });

  it('locks the value after ParseIntPipe: /item/42 and /item/042 have one holder', async () => {
    const outcome = await race([{ path: 'item/42' }, { path: 'item/042' }]);
    expect(outcome.max).toBe(1);
    expect(outcome.statuses.sort()).toEqual([201, 409]);
    expect(holder(outcome)).toEqual({ key: 'item:42', received: [42] });
  });

  it('gives (x:y, z) and (x, y:z) two locks, both held at once and each shown by inspect()', async () => {
    const seen: Array<{ held: boolean; label?: string }> = [];
    const outcome = await race(
      [{ path: `pair?a=${encodeURIComponent('x:y')}&b=z` }, { path: `pair?a=x&b=${encodeURIComponent('y:z')}` }],
      async () => {
        for (const key of ['pair:x%3Ay:z', 'pair:x:y%3Az']) {
          const info = await locks.inspect(key);
          seen.push({ held: info.held, label: info.holder?.label });
        }
      },
    );
    expect(outcome.max).toBe(2);
    expect(outcome.statuses).toEqual([201, 201]);
    expect(outcome.answers.map((answer) => (answer as Entered).key)).toEqual(['pair:x%3Ay:z', 'pair:x:y%3Az']);
    expect(seen).toEqual([
      { held: true, label: 'KeySourcesController.pair' },
      { held: true, label: 'KeySourcesController.pair' },
    ]);
  });

  it('locks per tenant from a header: one holder per tenant whatever the query says, tenants in parallel', async () => {
    const same = await race([
      { path: 'tenant?x-tenant=a', headers: { 'x-tenant': 't1' } },
      { path: 'tenant?x-tenant=b', headers: { 'x-tenant': 't1' } },
    ]);
    expect(same.max).toBe(1);
    expect(same.statuses.sort()).toEqual([201, 409]);
    expect(holder(same).key).toBe('tenant:t1');

    const different = await race([
      { path: 'tenant', headers: { 'x-tenant': 't1' } },
      { path: 'tenant', headers: { 'x-tenant': 't2' } },
    ]);
    expect(different.max).toBe(2);
    expect(different.statuses).toEqual([201, 201]);
  });

  it('locks per user from the principal a guard set: a body field named user changes nothing', async () => {
    const same = await race([
      { path: 'me', headers: { 'x-user': 'u1' }, body: { user: { id: 'u2' } } },
      { path: 'me', headers: { 'x-user': 'u1' }, body: { user: { id: 'u3' } } },
    ]);
    expect(same.max).toBe(1);
    expect(same.statuses.sort()).toEqual([201, 409]);
    expect(holder(same).key).toBe('user:u1');

    const different = await race([
      { path: 'me', headers: { 'x-user': 'u1' } },
      { path: 'me', headers: { 'x-user': 'u2' } },
    ]);
    expect(different.max).toBe(2);
    expect(different.statuses).toEqual([201, 201]);
  });

  it('answers 400 naming the placeholder when the header a key needs is missing', async () => {
    const response = await send({ path: 'tenant' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { message: string; code: string; resource: string };
    expect(body).toMatchObject({ code: 'LOCK_KEY_INVALID', resource: 'tenant:<headers.x-tenant>' });
    expect(body.message).toContain('<headers.x-tenant>');
  });
});

@Controller('docs')
class DocsByQueryId {
  @Post(':id')
  @WithLock('doc:<id>')
  update(@Query('id') id: string): string {
    return id;
  }
}

@Controller(['shared', 'tenants/:tenant'])
class TenantOnSomeRoutes {
  @Post('report')
  @WithLock('report:<tenant>')
  report(): string {
    return 'ok';
  }
}

@Controller('docs')
class DocOnSomeMethodPaths {
  @Post([':id', 'all'])
  @WithLock('doc:<id>')
  touch(): string {
    return 'ok';
  }
}

@Controller('docs')
class DocTypo {
  @Post(':id')
  @WithLock('doc:<idd>')
  update(@Param('id') id: string): string {
    return id;
  }
}

@Controller('orders')
class OrderByBodyParameter {
  @Post()
  @WithLock('order:<body.orderId>')
  create(@Body() body: { orderId: string }): string {
    return body.orderId;
  }
}

@Injectable()
class NightlyJob {
  @WithLock('job:<user.id>')
  run(id: string): string {
    return id;
  }
}

describe.each<Platform>(['express', 'fastify'])('bootstrap checks of @WithLock keys on %s', (platform) => {
  /** What bootstrapping an application with `controllers` and `providers` threw. */
  async function bootError(controllers: Type[], providers: Type[] = []): Promise<unknown> {
    @Module({ imports: [LockModule.forRoot()], controllers, providers })
    class CheckedModule {}
    const app = await createApp(platform, CheckedModule);
    try {
      await app.init();
      return undefined;
    } catch (error) {
      return error;
    } finally {
      await app.close();
    }
  }

  it.each<[string, Type[], Type[], RegExp]>([
    [
      'a parameter named like a route param it is not bound to',
      [DocsByQueryId],
      [],
      /DocsByQueryId\.update.*<id> could be the parameter "id" \(@Query\('id'\)\) or the route param :id of \/docs\/:id/,
    ],
    [
      'a route param of some controller paths only',
      [TenantOnSomeRoutes],
      [],
      /TenantOnSomeRoutes\.report.*<tenant>: the route param :tenant is not in every route of its routes \/shared\/report, \/tenants\/:tenant\/report/,
    ],
    [
      'a route param of some method paths only',
      [DocOnSomeMethodPaths],
      [],
      /DocOnSomeMethodPaths\.touch.*<id>: the route param :id is not in every route of its routes \/docs\/:id, \/docs\/all/,
    ],
    [
      'a name that is no parameter and no route param',
      [DocTypo],
      [],
      /DocTypo\.update.*<idd> matches no parameter of DocTypo\.update\(id\) and no route param of \/docs\/:id/,
    ],
    [
      'a request source that is also a parameter name',
      [OrderByBodyParameter],
      [],
      /OrderByBodyParameter\.create.*<body\.orderId> could be the request's body or the parameter "body"/,
    ],
    [
      'a request source on a method that serves no request',
      [],
      [NightlyJob],
      /NightlyJob\.run.*<user\.id> reads the request, and NightlyJob\.run is not a request handler/,
    ],
  ])(
    'fails with LockConfigurationError naming class, method and placeholder for %s',
    async (_name, controllers, providers, message) => {
      const error = await bootError(controllers, providers);
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect((error as Error).message).toMatch(message);
    },
  );

  it('reads a route param of a RouterModule path as a route param of every route', async () => {
    @Controller('docs')
    class OrgDocs {
      constructor(private readonly locks: LockService) {}

      @Post(':id')
      @WithLock('org:<orgId>:doc:<id>')
      update(@Param('id') id: string): { key?: string; id: string } {
        return { key: this.locks.current()?.key, id };
      }
    }
    @Module({ controllers: [OrgDocs] })
    class OrgModule {}
    @Module({
      imports: [
        LockModule.forRoot({ redis: testRedisUrl(), keyPrefix: uniquePrefix(), isGlobal: true }),
        OrgModule,
        RouterModule.register([{ path: 'orgs/:orgId', module: OrgModule }]),
      ],
    })
    class RoutedModule {}
    const { app, url } = await startApp(platform, RoutedModule);
    try {
      const response = await fetch(`${url}/orgs/o1/docs/d1?orgId=forged`, { method: 'POST' });
      expect(await response.json()).toEqual({ key: 'org:o1:doc:d1', id: 'd1' });
    } finally {
      await app.close();
    }
  });
});
