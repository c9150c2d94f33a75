import type { LockLogger } from '../interfaces/lock-options.interface.js';
import { describeLateGrant } from '../core/late-grant.js';
import type { LockEventBase, LockEvents, LockStoreOperation } from './lock-events.js';
import { DIRECT_KEY_TEMPLATE } from './lock-observer.js';
import { printable, quoted } from '../utils/printable.js';

/** Within this many ms, store failures of one operation are logged once and the others counted. */
export const STORE_ERROR_LOG_INTERVAL = 5000;

const AFTER_STORE_ERROR: Record<LockStoreOperation, string> = {
  acquire: '',
  extend: '',
  renew: "; retrying until the lease's validity runs out",
  release: '; the lease will end by its TTL',
  inspect: '',
};

/**
 * The manager's logging, as listeners of its own events: quiet by default; `debug` for contention and
 * skipped calls, `warn` for lost leases, late grants and leases that outlived the shutdown's drain (by
 * template, never by key: when the drain ends and when they end), `error` for store failures (at most one
 * line per operation every {@link STORE_ERROR_LOG_INTERVAL} ms, saying how many were left out, so an outage
 * does not flood the log).
 * Messages name keys, templates and labels, never a token; each is one line: control characters in keys,
 * labels, templates and store errors are escaped (`\n`, `\u001b`), so a key cannot forge a log line.
 */
export function logLockEvents(events: LockEvents, logger: LockLogger): void {
  if (logger.debug) {
    const debug = (message: string): void => logger.debug?.(printable(message));
    events.on('contended', (event) => {
      const holder = event.remainingTtl === undefined ? '' : ` (its lease ends in ${event.remainingTtl} ms)`;
      const next = event.wait > 0 ? `waiting up to ${event.wait} ms` : 'not waiting';
      debug(`Lock ${quoted(event.key)} is held by another owner${holder}; ${next}${describe(event)}.`);
    });
    events.on('skipped', (event) => debug(`Skipped ${event.label}: ${event.error.message}`));
  }

  events.on('late-grant', (event) => {
    const next = event.retrying ? 'trying again within the wait' : 'no wait left to try again';
    logger.warn(
      printable(
        `Lock ${quoted(event.key)}: ${describeLateGrant(event)}, so it was released unused; ${next}${describe(event)}. ` +
          "The store, or this process's event loop, is too slow for this ttl.",
      ),
    );
  });

  events.on('lost', (event) => {
    const late =
      event.pastDrain === undefined ? '' : `, until ${Math.round(event.pastDrain)} ms past the shutdown's drain`;
    logger.warn(
      printable(
        `${event.error.message} It had been held for ${Math.round(event.holdTime)} ms${describe(event)}${late}.`,
      ),
    );
  });

  let watchingLateReleases = false;
  events.on('outlived-drain', (event) => {
    logger.warn(
      printable(
        `${byTemplate(event)}: the shutdown's drain of ${event.drainTimeout} ms ended while its lease was held ` +
          `(for ${Math.round(event.holdTime)} ms); its signal aborted (reason shutdown) and the lease is kept until ` +
          'its holder releases it or the process exits.',
      ),
    );
    // only a shutdown has late releases: before one, nobody listens to 'released' (no payload on the hot path)
    if (watchingLateReleases) return;
    watchingLateReleases = true;
    events.on('released', (released) => {
      if (released.pastDrain === undefined) return;
      logger.warn(
        printable(
          `${byTemplate(released)}: released ${Math.round(released.pastDrain)} ms past the shutdown's drain ` +
            `(held for ${Math.round(released.holdTime)} ms).`,
        ),
      );
    });
  });

  const throttles = new Map<LockStoreOperation, { since: number; left: number }>();
  events.on('store-error', (event) => {
    const now = Date.now();
    const throttle = throttles.get(event.operation);
    if (throttle && now - throttle.since < STORE_ERROR_LOG_INTERVAL) {
      throttle.left++;
      return;
    }
    const left = throttle?.left ?? 0;
    throttles.set(event.operation, { since: now, left: 0 });
    const more = left > 0 ? ` (${left} more ${event.operation} failures since the last one logged)` : '';
    logger.error(printable(`${event.error.message}${AFTER_STORE_ERROR[event.operation]}${more}`));
  });
}

/** A lease by its key template and label, never by its resolved key. */
function byTemplate(event: LockEventBase): string {
  const by = event.label === undefined ? '' : ` [by ${event.label}]`;
  return event.keyTemplate === DIRECT_KEY_TEMPLATE
    ? `A lock without a key template (metricKey)${by}`
    : `Lock template ${quoted(event.keyTemplate)}${by}`;
}

/** The template and label of an event, when they add something to its key. */
function describe(event: LockEventBase): string {
  const parts: string[] = [];
  if (event.keyTemplate !== DIRECT_KEY_TEMPLATE && event.keyTemplate !== event.key)
    parts.push(`template ${event.keyTemplate}`);
  if (event.label !== undefined) parts.push(`by ${event.label}`);
  return parts.length > 0 ? ` [${parts.join(', ')}]` : '';
}
