import type { LockLogger } from '../../interfaces/lock-options.interface.js';
import { describeLateGrant } from '../waiting/late-grant.js';
import type { LockEventBase, LockEvents, LockStoreOperation } from './lock-events.js';
import { DIRECT_KEY_TEMPLATE } from './lock-observer.js';
import { lockSubject } from '../../errors/lock-subject.js';
import { printable } from '../../utils/printable.js';

/** Within this many ms, store failures of one operation are logged once and the others counted. */
export const STORE_ERROR_LOG_INTERVAL = 5000;

const AFTER_STORE_ERROR: Record<LockStoreOperation, string> = {
  acquire: '',
  extend: '',
  renew: "; retrying until the lease's validity runs out",
  release: '; retrying until the lease would have ended by its TTL',
  inspect: '',
};

/**
 * The manager's logging, as listeners of its own events: quiet by default; `debug` for contention and
 * skipped calls, `warn` for lost leases, late grants and leases that outlived the shutdown's drain (when the
 * drain ends and when they end), `error` for store failures (at most one line per operation every
 * {@link STORE_ERROR_LOG_INTERVAL} ms, saying how many were left out, so an outage does not flood the log).
 * Lines name a lock by its key template and label, by its resolved key only with `showKeys`, and never by
 * its token; each is one line: control characters in keys, labels, templates and store errors are escaped
 * (`\n`, `\u001b`), so a key cannot forge a log line.
 * @param showKeys name resolved keys (the manager's `exposeResolvedKeys`)
 */
export function logLockEvents(events: LockEvents, logger: LockLogger, showKeys = false): void {
  const subject = (event: LockEventBase): string => lockSubject(showKeys ? event.key : templateOf(event));
  if (logger.debug) {
    const debug = (message: string): void => logger.debug?.(printable(message));
    events.on('contended', (event) => {
      const holder = event.remainingTtl === undefined ? '' : ` (its lease ends in ${event.remainingTtl} ms)`;
      const next = event.wait > 0 ? `waiting up to ${event.wait} ms` : 'not waiting';
      debug(`${subject(event)} is held by another owner${holder}; ${next}${describe(event, showKeys)}.`);
    });
    events.on('skipped', (event) => debug(`Skipped ${event.label}: ${event.error.message}`));
  }

  events.on('late-grant', (event) => {
    const next = event.retrying ? 'trying again within the wait' : 'no wait left to try again';
    logger.warn(
      printable(
        `${subject(event)}: ${describeLateGrant(event)}, so it was released unused; ${next}${describe(event, showKeys)}. ` +
          "The store, or this process's event loop, is too slow for this ttl.",
      ),
    );
  });

  events.on('lost', (event) => {
    const late =
      event.pastDrain === undefined ? '' : `, until ${Math.round(event.pastDrain)} ms past the shutdown's drain`;
    logger.warn(
      printable(
        `${event.error.message} It had been held for ${Math.round(event.holdTime)} ms${describe(event, showKeys)}${late}.`,
      ),
    );
  });

  let watchingLateReleases = false;
  events.on('outlived-drain', (event) => {
    logger.warn(
      printable(
        `${subject(event)}${describe(event, showKeys)}: the shutdown's drain of ${event.drainTimeout} ms ended while its lease was held ` +
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
          `${subject(released)}${describe(released, showKeys)}: released ${Math.round(released.pastDrain)} ms past the shutdown's drain ` +
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

/** The key template of an event, unless it has none (a direct call without `metricKey`). */
function templateOf(event: LockEventBase): string | undefined {
  return event.keyTemplate === DIRECT_KEY_TEMPLATE ? undefined : event.keyTemplate;
}

/** What a line adds to the name it gives a lock: its label, and its template when it is named by its key. */
function describe(event: LockEventBase, showKeys: boolean): string {
  const parts: string[] = [];
  const template = templateOf(event);
  if (showKeys && template !== undefined && template !== event.key) parts.push(`template ${template}`);
  if (event.label !== undefined) parts.push(`by ${event.label}`);
  return parts.length > 0 ? ` [${parts.join(', ')}]` : '';
}
