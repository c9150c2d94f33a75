import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LockConfigurationError } from './errors/lock-configuration.error.js';
import { WITH_LOCK_METADATA } from './lock.constants.js';
import { bindInstance } from './lock-registry.js';
import type { LockedMethod } from './locked-method.js';
import { LockService } from './lock.service.js';
import { isHttpHandler } from './utils/is-http-handler.js';

/**
 * At bootstrap, finds every `@WithLock` method of the application's providers and controllers: binds
 * their instances to this application's LockService (so two apps in one process keep their own locks)
 * and rejects key placeholders that can never resolve, before the first call instead of at it.
 */
@Injectable()
export class LockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly service: LockService,
  ) {}

  onModuleInit(): void {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      let locked = false;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[name];
        const definition =
          typeof method === 'function'
            ? (Reflect.getOwnMetadata(WITH_LOCK_METADATA, method) as LockedMethod | undefined)
            : undefined;
        if (!definition) continue;
        locked = true;
        this.check(definition, method as object);
      }
      if (locked) bindInstance(instance, this.service);
    }
  }

  private check(locked: LockedMethod, method: object): void {
    const unresolvable = locked.unresolvablePlaceholders(isHttpHandler(method));
    if (unresolvable.length === 0) return;
    const { label, parameterNames } = locked.definition;
    throw new LockConfigurationError(
      `@WithLock(${label}) key`,
      locked.definition.key,
      `placeholder ${unresolvable.join(', ')} matches no parameter of ${label}(${parameterNames.map((n, i) => n ?? `<${i}>`).join(', ')}); ` +
        'use a parameter name, an index like <0>, a path like <0.productId>, or a key function',
    );
  }
}
