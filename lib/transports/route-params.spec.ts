import { joinRoutes, routeParamNames } from './route-params.js';

describe('routeParamNames', () => {
  it.each([
    ['/docs/:id', ['id']],
    ['docs/:id?', ['id']],
    ['items/:id(\\d+)', ['id']],
    [':from-:to', ['from', 'to']],
    ['files/*path', ['path']],
    ['users{/:userId}', ['userId']],
    ['a/:"quoted name"', ['quoted name']],
    ['tenants/:tenant_id/:$x', ['tenant_id', '$x']],
    ['time\\:now/:id', ['id']],
    ['/', []],
  ])('reads %j as %j', (path, names) => {
    expect(routeParamNames(path)).toEqual(names);
  });
});

describe('joinRoutes', () => {
  it('joins every path of each level with every path of the next, without doubled slashes', () => {
    expect(joinRoutes([[''], ['a/', '/b/:tenant'], [':id', '/']])).toEqual([
      '/a/:id',
      '/a',
      '/b/:tenant/:id',
      '/b/:tenant',
    ]);
  });

  it('starts with a RouterModule path', () => {
    expect(joinRoutes([['orgs/:org'], ['/'], ['docs']])).toEqual(['/orgs/:org/docs']);
  });
});
