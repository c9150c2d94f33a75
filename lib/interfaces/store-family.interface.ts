import type { LockModuleOptions } from './lock-module-options.interface.js';
import type { LockStore } from './lock-store.interface.js';

/**
 * What a store family decided from the module options, every option checked and nothing connected yet: the
 * store to build and what to build it with. Its `kind` tells which family made it (see {@link StoreFamily.kinds}).
 */
export interface StorePlan {
  /** What is planned: `'etcd'`, or how a Redis store gets its client (`'url'`, `'options'`, ...). */
  readonly kind: string;
}

/** A store the module built or was given, and whether the module closes it. */
export interface CreatedStore {
  readonly store: LockStore;
  /** Whether the module made it (and closes it); a store or client you pass in is never closed. */
  readonly owned: boolean;
}

/**
 * What every ttl must respect on a store, known before the store exists: the module checks its default ttl
 * against it at bootstrap, as a manager checks each ttl against its store.
 */
export interface LeaseBounds {
  /** The store's name, for messages: `'EtcdLockStore'`. */
  readonly store: string;
  /** The least ttl the store grants, in ms. */
  readonly minTtl?: number;
  /** The store's clock-drift allowance for a ttl, when it has its own (Redlock's `driftFactor`). */
  readonly clockDrift?: (ttl: number) => number;
  /** For how many ms a released key stays reserved for the process first in line. */
  readonly handoffWindow?: number;
}

/**
 * One family of stores as `LockModule` builds it: a plug-in, registered by one line in `stores/registry.ts`.
 * The module finds the family its options select, lets it check them before anything connects (`plan`),
 * checks its default ttl against the store (`leaseBounds`), and builds the store when the application starts
 * (`build`).
 * @typeParam Plan what the family plans
 */
export interface StoreFamily<Plan extends StorePlan = StorePlan> {
  /**
   * The module option that selects this family (`'etcd'`); none for the one family the module falls back to
   * when no option selects any.
   */
  readonly option?: keyof LockModuleOptions;
  /** What that option takes, for the refusal of one given empty: `'{ hosts: [...] }'` (given with `option`). */
  readonly expects?: string;
  /** Names that are no module option but belong in this family's option, each with where it goes. */
  readonly misplaced?: Readonly<Record<string, string>>;
  /** Every `kind` of plan the family makes: a plan is built by the family that made it. */
  readonly kinds: ReadonlyArray<Plan['kind']>;
  /** What the module logs at startup when it built this family's store (the memory store's: locks of one process). */
  readonly warning?: string;
  /**
   * Checks every module option this family reads, and refuses those it has no use for, connecting nothing.
   * Called only when its option is given (neither `undefined`, `null` nor `''`), or for the fallback family.
   * @throws LockConfigurationError naming the first option that cannot work
   */
  plan(options: LockModuleOptions): Plan;
  /** What a ttl must respect on the planned store. */
  leaseBounds(plan: Plan): LeaseBounds;
  /**
   * Builds the planned store, loading the optional package it needs (ioredis, etcd3) only now.
   * @throws LockConfigurationError when that package cannot be loaded
   */
  build(plan: Plan): Promise<CreatedStore>;
}
