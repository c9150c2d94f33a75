import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, ModulesContainer } from '@nestjs/core';
import { NEST_MODULE_PATH_METADATA, WITH_LOCK_METADATA } from './lock.constants.js';
import { bindInstance } from './lock-registry.js';
import type { LockedMethod } from './decorators/locked-method.js';
import { LockService } from './lock.service.js';
import { scheduleOf } from './schedule/method-schedule.js';
import type { SchedulerJobs } from './schedule/scheduler-jobs.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/** One `@WithLock` method found at bootstrap, on the class of `instance`. */
interface FoundMethod {
  readonly wrapper: InstanceWrapper;
  readonly instance: object;
  readonly owner: object;
  /** The method as Nest sees it: the outermost wrapper, with every decorator's metadata. */
  readonly method: object;
  readonly definition: LockedMethod;
}

/**
 * At bootstrap, finds every `@WithLock` method of the application's providers and controllers: binds
 * their instances to this application's LockService (so two apps in one process keep their own locks)
 * and binds each key template to its method, failing the bootstrap with a `LockConfigurationError` for a
 * placeholder that could come from two places or from none, for a `limit` or `mode` on a store without
 * permits, or for a ttl the store cannot honour, before the first call instead of at it. A `@Cron` method is bound to the application's scheduler,
 * whose times its runs claim.
 */
@Injectable()
export class LockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly modules: ModulesContainer,
    private readonly service: LockService,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onModuleInit(): Promise<void> {
    const found = this.lockedMethods();
    const crons = found.some(({ method }) => scheduleOf(method)?.kind === 'cron');
    const jobs = crons ? await this.schedulerJobs() : undefined;
    for (const { wrapper, owner, method, definition } of found) {
      // request-scoped classes are checked too: their templates do not depend on the instance
      definition.prepare(owner, method, this.modulePathOf(wrapper), jobs);
      definition.checkPermits(this.service.store);
      definition.checkSettings(this.service);
    }
    for (const { wrapper, instance } of found) {
      if (wrapper.isDependencyTreeStatic()) bindInstance(instance, this.service);
    }
  }

  /** Every `@WithLock` method of the application's providers and controllers. */
  private lockedMethods(): FoundMethod[] {
    const found: FoundMethod[] = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as object | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[name];
        const definition =
          typeof method === 'function'
            ? (Reflect.getOwnMetadata(WITH_LOCK_METADATA, method) as LockedMethod | undefined)
            : undefined;
        if (definition) {
          found.push({
            wrapper,
            instance,
            owner: prototype.constructor,
            method: method as object,
            definition,
          });
        }
      }
    }
    return found;
  }

  /** The application's `@nestjs/schedule` registry, if it has one (`ScheduleModule.forRoot()` is global). */
  private async schedulerJobs(): Promise<SchedulerJobs | undefined> {
    try {
      const { SchedulerRegistry } = await import('@nestjs/schedule');
      return this.moduleRef.get(SchedulerRegistry, { strict: false });
    } catch {
      // no scheduler: a @Cron method of this application is called by hand only, and claims no tick
      return undefined;
    }
  }

  /** The path `RouterModule` mounts the wrapper's module under, which its controllers' routes start with. */
  private modulePathOf(wrapper: InstanceWrapper): string | undefined {
    const module = wrapper.host?.metatype;
    if (!module) return undefined;
    const path: unknown =
      Reflect.getMetadata(NEST_MODULE_PATH_METADATA + this.modules.applicationId, module) ??
      Reflect.getMetadata(NEST_MODULE_PATH_METADATA, module);
    return typeof path === 'string' ? path : undefined;
  }
}
