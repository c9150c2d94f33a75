import type { Attributes } from '@opentelemetry/api';
import type { LockError } from '../errors/lock.error.js';
import type { LockStoreErrorEvent } from '../core/events/lock-events.js';
import { DIRECT_KEY_TEMPLATE } from '../core/events/lock-observer.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';

/** The part of a lock event that names its key. */
export interface KeyedEvent {
  readonly key: string;
  readonly keyTemplate?: string;
}

/**
 * What metrics and spans may say about a lock event: bounded attributes (the key template and the store
 * class), and error texts that name the template; the resolved key only with `resolvedKeys`.
 */
export class LockAttributes {
  /**
   * @param storeName the class of the manager's store (`lock.store`)
   * @param options the telemetry options, read at each event
   */
  constructor(
    readonly storeName: string,
    private readonly options: LockTelemetryOptions,
  ) {}

  /** The attributes of a lock event. */
  of(event: KeyedEvent): Attributes {
    const attributes: Attributes = {
      'lock.key_template': event.keyTemplate ?? DIRECT_KEY_TEMPLATE,
      'lock.store': this.storeName,
    };
    if (this.options.resolvedKeys) attributes['lock.key'] = event.key;
    return attributes;
  }

  /** The attributes of a store failure: by operation, with the key template when there is one. */
  ofStoreError(event: LockStoreErrorEvent): Attributes {
    const attributes: Attributes = { 'lock.operation': event.operation, 'lock.store': this.storeName };
    if (event.keyTemplate !== undefined) attributes['lock.key_template'] = event.keyTemplate;
    if (this.options.resolvedKeys) attributes['lock.key'] = event.key;
    return attributes;
  }

  /**
   * What a span may say about `error`: its message naming the resource by its key template (see `LockError`),
   * by its resolved key with `resolvedKeys`, whatever the manager's messages show, and the stack with it.
   */
  describe(error: LockError, event: KeyedEvent): { message: string; stack?: string } {
    const shown = this.options.resolvedKeys === true;
    const template = event.keyTemplate === DIRECT_KEY_TEMPLATE ? undefined : event.keyTemplate;
    const message = error.describeResource?.(shown ? event.key : template, shown) ?? error.message;
    // the stack's first lines repeat the message; only the frames after it are kept
    const frames = error.stack?.indexOf('\n    at ') ?? -1;
    return frames < 0 ? { message } : { message, stack: `${error.name}: ${message}${error.stack?.slice(frames)}` };
  }
}
