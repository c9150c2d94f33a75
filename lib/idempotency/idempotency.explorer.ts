import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { IDEMPOTENT_METADATA, NEST_MODULE_PATH_METADATA } from '../lock.constants.js';
import { LockService } from '../lock.service.js';
import { handlerSourcesOf } from '../transports/lock-transports.js';
import type { IdempotentHandler } from './idempotent-handler.js';
import { recordsOf } from './idempotent-run.js';

/**
 * At bootstrap, checks every `@Idempotent()` handler of the application's controllers before the first request:
 * that it is an HTTP route, that its `scope` template reads what its requests have, and that the store keeps
 * response records. Each failure is a `LockConfigurationError` naming the handler (and the store and why).
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
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as object | undefined;
      const prototype = instance && (Object.getPrototypeOf(instance) as Record<string, unknown> | null);
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
