import type { Attributes } from '@opentelemetry/api';
import type { LockError } from '../errors/lock.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockStoreErrorEvent } from '../events/lock-events.js';
import { DIRECT_KEY_TEMPLATE } from '../events/lock-observer.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { failureKind } from '../utils/failure-kind.js';
import { quoted } from '../utils/printable.js';

/** The part of a lock event that names its key. */
export interface KeyedEvent {
  readonly key: string;
  readonly keyTemplate?: string;
}

/**
 * What metrics and spans may say about a lock event: bounded attributes (the key template and the store
 * class), and error texts with the template where they quote the key; the resolved key only with `resolvedKeys`.
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
   * What a span may say about `error`: its message and stack as they are with `resolvedKeys`; else with the
   * key template where the message quotes the resolved key, and, for a store failure with a cause, the kind
   * of failure (`WRONGTYPE`, `ECONNREFUSED`, `timeout`) instead of its detail, which may name Redis keys.
   */
  describe(error: LockError, event: KeyedEvent): { message: string; stack?: string } {
    if (this.options.resolvedKeys) return { message: error.message, stack: error.stack };
    const template = quoted(event.keyTemplate ?? DIRECT_KEY_TEMPLATE);
    let message: string;
    if (error instanceof LockStoreError) {
      const reason = error.cause === undefined ? error.detail : (failureKind(error.cause) ?? 'failed');
      message = `Lock store failed to ${error.operation} ${template}: ${reason ?? 'failed'}`;
    } else {
      message = error.message.split(quoted(event.key)).join(template);
    }
    // the stack's first lines repeat the message; only the frames after it are kept
    const frames = error.stack?.indexOf('\n    at ') ?? -1;
    return frames < 0 ? { message } : { message, stack: `${error.name}: ${message}${error.stack?.slice(frames)}` };
  }
}
