import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { LeaderMethod } from './decorators/leader.decorator.js';
import { LockConfigurationError } from './errors/lock-configuration.error.js';
import type { Leadership } from './leadership/leadership.js';
import type { LeadershipHandle } from './leadership/leadership-handle.js';
import { leadTogether } from './leadership/lead-together.js';
import { LEADER_METADATA } from './lock.constants.js';
import { LockService } from './lock.service.js';

/** One `@Leader` method found at bootstrap, with the instance it runs on. */
interface FoundLeader {
  readonly instance: object;
  readonly method: (leadership: Leadership) => unknown;
  readonly definition: LeaderMethod;
}

/**
 * Starts a campaign for each `@Leader` name at bootstrap, once every module is initialised, and resigns them
 * when the application closes (the lock service's shutdown), before its providers are destroyed. Fails the
 * bootstrap with a `LockConfigurationError` for a `@Leader` method that is not a provider's (a controller's,
 * or a request-scoped or transient provider's, which have no one instance to run on), and for a name that two
 * methods give different options.
 */
@Injectable()
export class LeaderExplorer implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly leaders = new Map<string, FoundLeader[]>();
  private readonly handles: LeadershipHandle[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly service: LockService,
  ) {}

  /** Finds and checks every `@Leader` method. */
  async onModuleInit(): Promise<void> {
    try {
      this.checkLeaders();
    } catch (error) {
      // Nest runs no shutdown hooks after a failed bootstrap: close what the module opened, or it stays open
      await this.service.close();
      throw error;
    }
  }

  private checkLeaders(): void {
    for (const found of this.leaderMethods()) {
      const { name, label, settings } = found.definition;
      const others = this.leaders.get(name) ?? [];
      const other = others[0]?.definition;
      if (other && (other.settings.ttl !== settings.ttl || other.settings.backoff !== settings.backoff)) {
        throw new LockConfigurationError(
          `@Leader(${label})`,
          name,
          `${other.label} leads this name with other options; give both the same options, or each its own name`,
        );
      }
      this.leaders.set(name, [...others, found]);
    }
  }

  /** Starts campaigning: a method of a name runs only while this instance leads it. */
  onApplicationBootstrap(): void {
    for (const [name, found] of this.leaders) {
      const run = (leadership: Leadership): unknown =>
        found.length === 1
          ? found[0].method.call(found[0].instance, leadership)
          : leadTogether(
              leadership,
              found.map(
                ({ method, instance }) =>
                  (term: Leadership) =>
                    method.call(instance, term),
              ),
            );
      this.handles.push(this.service.lead(name, run, found[0].definition.options));
    }
  }

  /**
   * Starts the lock service's shutdown before the providers the leaders' methods use are destroyed: from now on
   * every acquisition is refused (503 over HTTP), each term's signal aborts (cause `shutdown`), and this waits
   * for the methods to return and every holder to let go, within the one `drainTimeout`. Waiting here for the
   * leaders alone would let requests take locks meanwhile, and make the shutdown last twice the drain.
   */
  async onModuleDestroy(): Promise<void> {
    if (this.handles.splice(0).length === 0) return;
    await this.service.close();
  }

  /** Every `@Leader` method of the application's providers; a controller's is refused. */
  private leaderMethods(): FoundLeader[] {
    const found: FoundLeader[] = [];
    const wrappers = [
      ...this.discovery.getProviders().map((wrapper) => ({ wrapper, controller: false })),
      ...this.discovery.getControllers().map((wrapper) => ({ wrapper, controller: true })),
    ];
    for (const { wrapper, controller } of wrappers) {
      const instance = wrapper.instance as object | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
      if (!prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[methodName];
        if (typeof method !== 'function') continue;
        const definition = Reflect.getOwnMetadata(LEADER_METADATA, method) as LeaderMethod | undefined;
        if (!definition) continue;
        const refusal = controller
          ? "a controller's method answers requests; put it on a provider"
          : !wrapper.isDependencyTreeStatic() || wrapper.isTransient
            ? 'a request-scoped or transient provider has no one instance to run it on; use a singleton provider'
            : undefined;
        if (refusal) {
          throw new LockConfigurationError(
            `@Leader(${definition.label})`,
            definition.name,
            `expected it on a provider's method: ${refusal}`,
          );
        }
        found.push({ instance, method: method as FoundLeader['method'], definition });
      }
    }
    return found;
  }
}
