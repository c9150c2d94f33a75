import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { NEST_MODULE_PATH_METADATA, WITH_LOCK_METADATA } from './lock.constants.js';
import { bindInstance } from './lock-registry.js';
import type { LockedMethod } from './decorators/locked-method.js';
import { LockService } from './lock.service.js';

type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/**
 * At bootstrap, finds every `@WithLock` method of the application's providers and controllers: binds
 * their instances to this application's LockService (so two apps in one process keep their own locks)
 * and binds each key template to its method, failing the bootstrap with a `LockConfigurationError` for a
 * placeholder that could come from two places or from none, or for a `limit` or `mode` on a store without
 * permits, before the first call instead of at it.
 */
@Injectable()
export class LockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly modules: ModulesContainer,
    private readonly service: LockService,
  ) {}

  onModuleInit(): void {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const instance = wrapper.instance as object | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
      if (!prototype) continue;
      const modulePath = this.modulePathOf(wrapper);
      let locked = false;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[name];
        const definition =
          typeof method === 'function'
            ? (Reflect.getOwnMetadata(WITH_LOCK_METADATA, method) as LockedMethod | undefined)
            : undefined;
        if (!definition) continue;
        locked = true;
        // request-scoped classes are checked too: their templates do not depend on the instance
        definition.prepare(prototype.constructor as object, method as object, modulePath);
        definition.checkPermits(this.service.store);
      }
      if (locked && wrapper.isDependencyTreeStatic()) bindInstance(instance, this.service);
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
