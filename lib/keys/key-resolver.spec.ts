import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { KeyResolver, type KeyedMethod } from './key-resolver.js';
import { REQUEST_SOURCES, type HandlerSources, type ParameterBinding } from './key-sources.js';
import { KeyTemplate } from './key-template.js';

const method = (...parameterNames: (string | undefined)[]): KeyedMethod => ({
  label: 'Docs.update',
  parameterNames,
  arity: parameterNames.length,
});

/** An HTTP-like handler reached by `routes`, its parameters bound as given. */
function handler(routes: string[][], ...parameters: (ParameterBinding | undefined)[]): HandlerSources {
  const every = routes.reduce((common, params) => common.filter((p) => params.includes(p)));
  return {
    kind: 'an HTTP handler',
    sources: REQUEST_SOURCES,
    routes: routes.map((params) => `/docs/${params.map((p) => `:${p}`).join('/')}`),
    routeParams: new Set(every),
    someRouteParams: new Set(routes.flat()),
    parameters,
  };
}

const param = (field?: string): ParameterBinding => ({ source: 'params', field });
const query = (field?: string): ParameterBinding => ({ source: 'query', field });

const resolver = (template: string, m: KeyedMethod, h?: HandlerSources) =>
  new KeyResolver(new KeyTemplate(template), m, h);

/** The message of the LockConfigurationError that binding `template` throws. */
function refusal(template: string, m: KeyedMethod, h?: HandlerSources): string {
  try {
    resolver(template, m, h);
  } catch (error) {
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain('@WithLock(Docs.update) key');
    return (error as Error).message;
  }
  throw new Error(`binding ${template} was accepted`);
}

describe('KeyResolver on a method that serves no request', () => {
  it('reads names, indexes and paths from the arguments only', () => {
    const keys = resolver('doc:<id>:<1.rev>:<dto.owner.name>', method('id', 'change', 'dto'));
    expect(keys.resolve(['d1', { rev: 3 }, { owner: { name: 'ann' } }], { params: { id: 'other' } })).toBe(
      'doc:d1:3:ann',
    );
  });

  it('reads a parameter named like a request source as that parameter', () => {
    expect(resolver('account:<user.id>', method('user')).resolve([{ id: 7 }], undefined)).toBe('account:7');
  });

  it('refuses a request source, a name and an index that match no parameter', () => {
    expect(refusal('doc:<user.id>', method('id'))).toMatch(
      /<user\.id> reads the request.*not a request handler.*\(id\)/,
    );
    expect(refusal('doc:<idd>', method('id'))).toMatch(/<idd> matches no parameter of Docs\.update\(id\)/);
    expect(refusal('doc:<2>', method('id', 'rev'))).toMatch(/<2> names argument 2.*has 2/);
  });

  it('reads properties a class defines, never those every object has', () => {
    class Entity {
      get id(): string {
        return 'e1';
      }
    }
    const keys = resolver('doc:<entity.id>', method('entity'));
    expect(keys.resolve([new Entity()], undefined)).toBe('doc:e1');
    const constructorKey = resolver('doc:<entity.constructor>', method('entity'));
    expect(() => constructorKey.resolve([{}], undefined)).toThrow(LockKeyError);
    expect(constructorKey.resolve([{ constructor: 'own' }], undefined)).toBe('doc:own');
  });
});

describe('KeyResolver on a request handler', () => {
  const frame = { params: { id: '042' }, query: { id: 'q', docId: 'q' }, body: { id: 'b' }, headers: {}, user: {} };

  it('reads a bare name from the argument, never from the query or the body', () => {
    const keys = resolver('doc:<docId>', method('docId'), handler([['id']], param('id')));
    expect(keys.resolve(['d1'], frame)).toBe('doc:d1');
  });

  it('reads a route param through the parameter that takes it, as the handler receives it', () => {
    const keys = resolver('doc:<id>', method('docId'), handler([['id']], param('id')));
    expect(keys.resolve([42], frame)).toBe('doc:42');
  });

  it('reads a route param no parameter takes from the route params', () => {
    const keys = resolver('doc:<id>', method(), handler([['id']]));
    expect(keys.resolve([], frame)).toBe('doc:042');
  });

  it('reads explicit sources from the request only', () => {
    const keys = resolver('doc:<query.id>:<body.id>:<params.id>', method('id'), handler([['id']], param('id')));
    expect(keys.resolve(['arg'], frame)).toBe('doc:q:b:042');
  });

  it('accepts a parameter with the name of a route param when it is bound to that very route param', () => {
    expect(resolver('doc:<id>', method('id'), handler([['id']], param('id'))).resolve([42], frame)).toBe('doc:42');
  });

  it('refuses a parameter with the name of a route param that it is not bound to', () => {
    expect(refusal('doc:<id>', method('id'), handler([['id']], query('id')))).toMatch(
      /<id> could be the parameter "id" \(@Query\('id'\)\) or the route param :id of \/docs\/:id/,
    );
    expect(refusal('doc:<id>', method('id'), handler([['id']], param()))).toMatch(/\(@Param\(\)\)/);
    expect(refusal('doc:<id>', method('id'), handler([['id']]))).toMatch(/has no parameter decorator/);
    expect(refusal('doc:<id>', method('id'), handler([['id'], []]))).toMatch(/route param :id of its routes/);
  });

  it('refuses a bare name that is a route param of only some routes, or of none', () => {
    expect(refusal('doc:<tenant>', method(), handler([['tenant', 'id'], ['id']]))).toMatch(
      /:tenant is not in every route of its routes \/docs\/:tenant\/:id, \/docs\/:id/,
    );
    expect(refusal('doc:<sku>', method('id'), handler([['id']], param('id')))).toMatch(
      /<sku> matches no parameter of Docs\.update\(id\) and no route param of \/docs\/:id/,
    );
  });

  it('refuses a source word that is also a parameter name', () => {
    expect(refusal('doc:<body.sku>', method('body'), handler([[]], { source: 'body' }))).toMatch(
      /<body\.sku> could be the request's body or the parameter "body".*<0\.sku>/,
    );
  });

  it('refuses a source with no field, an upper-case header name and a route param that no route has', () => {
    expect(refusal('doc:<user>', method(), handler([[]]))).toMatch(/<user> needs a field, like <user\.id>/);
    expect(refusal('doc:<headers.X-Tenant>', method(), handler([[]]))).toMatch(/write <headers\.x-tenant>/);
    expect(refusal('doc:<params.idd>', method(), handler([['id']]))).toMatch(/:idd is in no route of \/docs\/:id/);
  });

  it('refuses a route param taken by two parameters, which pipes may turn into two values', () => {
    expect(refusal('doc:<id>', method('a', 'b'), handler([['id']], param('id'), param('id')))).toMatch(
      /:id goes to 2 parameters/,
    );
  });

  it('fails a call that reads the request without one, with a LockKeyError', () => {
    const keys = resolver('doc:<user.id>', method(), handler([[]]));
    expect(() => keys.resolve([], undefined)).toThrow(LockKeyError);
    expect(keys.resolve([], { user: { id: 'u1' } })).toBe('doc:u1');
  });

  it('refuses an array-valued header instead of joining it', () => {
    const keys = resolver('tenant:<headers.x-tenant>', method(), handler([[]]));
    expect(() => keys.resolve([], { headers: { 'x-tenant': ['a', 'b'] } })).toThrow(/resolved to an array/);
  });
});
