import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { IDEMPOTENT_METADATA, NEST_MODULE_PATH_METADATA } from '../lock.constants.js';
import { LockService } from '../lock.service.js';
import { handlerSourcesOf } from '../transports/lock-transports.js';
import type { IdempotentHandler } from './idempotent-handler.js';
import { recordsOf } from './idempotent-run.js';

/**
 * At bootstrap, checks every `@Idempotent()` method of the application before the first request: that it is an
 * HTTP route (a provider's method, a gateway's or a resolver's would run on every call unguarded, as the
 * decorator only acts on routes), that its `scope` template reads what its requests have, and that the store
 * keeps response records. Each failure is a `LockConfigurationError` naming the handler (and the store and why).
 */
@Injectable()
export class IdempotencyExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly modules: ModulesContainer,
    private readonly service: LockService,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      // a class's prototype, whether or not Nest made its instance yet (a request-scoped one has none)
      const metatype: unknown = wrapper.metatype;
      const prototype =
        typeof metatype === 'function' && !wrapper.isAlias
          ? (metatype.prototype as Record<string, unknown> | undefined)
          : undefined;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[name];
        if (typeof method !== 'function') continue;
        const handler = Reflect.getOwnMetadata(IDEMPOTENT_METADATA, method) as IdempotentHandler | undefined;
        if (!handler) continue;
        const owner = prototype.constructor;
        const modulePath = this.modulePathOf(wrapper.host?.metatype);
        if (handlerSourcesOf({ owner, methodName: name, method, modulePath })?.kind !== 'an HTTP handler') {
          throw new LockConfigurationError(
            handler.option,
            handler.label,
            'expected it on an HTTP route handler (@Get, @Post...); elsewhere, call LockService.idempotent()',
          );
        }
        handler.prepare(owner, method, modulePath);
        recordsOf(this.service.store, handler.option);
      }
    }
  }

  /** The path `RouterModule` mounts a module under, which its controllers' routes start with. */
  private modulePathOf(module: unknown): string | undefined {
    if (!module) return undefined;
    const path: unknown =
      Reflect.getMetadata(NEST_MODULE_PATH_METADATA + this.modules.applicationId, module) ??
      Reflect.getMetadata(NEST_MODULE_PATH_METADATA, module);
    return typeof path === 'string' ? path : undefined;
  }
}
