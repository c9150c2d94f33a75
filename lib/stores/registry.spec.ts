import { MODULE_OPTIONS } from '../lock.module-options.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import { givenStore } from './given-store.descriptor.js';
import { MemoryLockStore } from './memory/memory.store.js';
import { familyOf, planStore, STORE_FAMILIES } from './registry.js';

/** Options that select each family, and the store they give. */
const SELECTIONS: Array<[string, LockModuleOptions]> = [
  ['a store given whole', { store: new MemoryLockStore() }],
  ['redis', { redis: 'redis://127.0.0.1:1' }],
  ['redis options', { redis: { host: '127.0.0.1', port: 1 } }],
  ['redlock', { redlock: { nodes: ['redis://a:1', 'redis://b:1', 'redis://c:1'] } }],
  ['etcd', { etcd: { hosts: '127.0.0.1:1' } }],
  ['postgres', { postgres: 'postgres://127.0.0.1:1/db' }],
  ['no store option', {}],
];

describe('the store registry', () => {
  it('has each kind of plan made by one family only, so a plan is built by the family that made it', () => {
    const kinds = [givenStore, ...STORE_FAMILIES].flatMap((family) => [...family.kinds]);
    expect(new Set(kinds).size).toBe(kinds.length);
  });

  it('falls back to one family only: the one no option selects', () => {
    expect(STORE_FAMILIES.filter((family) => !('option' in family))).toHaveLength(1);
  });

  it.each(SELECTIONS)('plans %s with a kind its family makes', (_label, options) => {
    const plan = planStore(options);
    expect(familyOf(plan).kinds).toContain(plan.kind);
  });

  it('takes each family option among the module options, says what it takes, advises on misplaced names', () => {
    for (const family of STORE_FAMILIES) {
      if ('option' in family) {
        expect(Object.keys(MODULE_OPTIONS.names)).toContain(family.option);
        expect(family.expects).toEqual(expect.any(String));
      }
      for (const name of Object.keys('misplaced' in family ? family.misplaced : {})) {
        expect(Object.keys(MODULE_OPTIONS.names)).not.toContain(name);
        expect(MODULE_OPTIONS.elsewhere).toHaveProperty(name);
      }
    }
  });
});
