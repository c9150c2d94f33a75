import { raceDeadline } from '../../utils/deadline.js';

/**
 * How long, in ms, closing the store waits for its connections to end. pg's `end()` waits for the server to
 * close the socket, which a server that no longer answers (a partition, a frozen host) never does: the
 * shutdown would hang until the orchestrator kills the process.
 */
export const END_TIMEOUT = 2000;

/** Waits for a connection's or pool's `end()` at most {@link END_TIMEOUT} ms; a failure to end is no error. */
export async function endWithin(ending: Promise<void>): Promise<void> {
  await raceDeadline(
    ending.catch(() => undefined),
    END_TIMEOUT,
    () => undefined,
  );
}
