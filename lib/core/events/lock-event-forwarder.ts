import type { ModuleRef } from '@nestjs/core';
import { LOCK_EVENT_NAMES, type LockEventName, type LockEventListener } from './lock-events.js';

/** The part of `EventEmitter2` the forwarder uses. */
export interface NestEventEmitter {
  emit(event: string, ...values: unknown[]): unknown;
}

/** Anything lock events can be subscribed on (a `LockManager`). */
interface LockEventSource {
  on<E extends LockEventName>(event: E, listener: LockEventListener<E>): () => void;
}

/**
 * The application's `EventEmitter2`, when `@nestjs/event-emitter` is installed and its module imported;
 * otherwise `undefined`. The package is an optional peer: it is loaded here, on demand, and only if present.
 */
export async function findNestEventEmitter(moduleRef: ModuleRef): Promise<NestEventEmitter | undefined> {
  let token: unknown;
  try {
    token = (await import('@nestjs/event-emitter')).EventEmitter2;
  } catch {
    return undefined;
  }
  try {
    const emitter = moduleRef.get<unknown, Partial<NestEventEmitter> | undefined>(token as never, { strict: false });
    return typeof emitter?.emit === 'function' ? (emitter as NestEventEmitter) : undefined;
  } catch {
    // the package is installed but EventEmitterModule is not imported
    return undefined;
  }
}

/** Re-emits every lock event of `source` on `emitter` as `lock.<name>`; returns a function that stops. */
export function forwardLockEvents(source: LockEventSource, emitter: NestEventEmitter): () => void {
  const stops = LOCK_EVENT_NAMES.map((name) => source.on(name, (event) => emitter.emit(`lock.${name}`, event)));
  return () => {
    for (const stop of stops) stop();
  };
}
