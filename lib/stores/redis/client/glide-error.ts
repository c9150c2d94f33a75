/**
 * The Redis error codes of the error kinds GLIDE names instead (its core reports `NOSCRIPT` as
 * `An error was signalled by the server: - NoScriptError: ...`).
 */
const CODES_OF_KINDS: Readonly<Record<string, string>> = {
  NoScriptError: 'NOSCRIPT',
  ResponseError: 'ERR',
  PermissionDenied: 'NOPERM',
  AuthenticationFailed: 'WRONGPASS',
  BusyLoadingError: 'LOADING',
  TryAgain: 'TRYAGAIN',
  ClusterDown: 'CLUSTERDOWN',
  CrossSlot: 'CROSSSLOT',
  MasterDown: 'MASTERDOWN',
  ReadOnly: 'READONLY',
  ExecAbortError: 'EXECABORT',
  NotBusy: 'NOTBUSY',
  Moved: 'MOVED',
  Ask: 'ASK',
};

const KIND_MESSAGE = /^An error was signalled by the server: - (\w+): ([\s\S]*)$/;
const CODE_MESSAGE = /^([A-Z][A-Z_-]{2,}): ([\s\S]*)$/;

/**
 * A GLIDE failure in the words the store reads in every client's errors (failure-kind.ts, script-runner.ts):
 * a server's error reply as `CODE message` (`NOSCRIPT ...`, `WRONGTYPE ...`, `NOPERM ...`), a request GLIDE
 * gave up as `Command timed out`, a closed or lost connection as `Connection is closed`. The original is the
 * `cause`; anything else is passed on as it is.
 */
export function fromGlideError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { name, message } = error;
  if (name === 'TimeoutError') return new Error(`Command timed out (${message})`, { cause: error });
  if (name === 'ClosingError' || name === 'ConnectionError') {
    return new Error(`Connection is closed (${message || 'the GLIDE client was closed'})`, { cause: error });
  }
  const kind = KIND_MESSAGE.exec(message);
  const code = kind ? CODES_OF_KINDS[kind[1]] : undefined;
  if (kind && code) return new Error(`${code} ${kind[2]}`, { cause: error });
  const reply = CODE_MESSAGE.exec(message);
  if (reply) return new Error(`${reply[1]} ${reply[2]}`, { cause: error });
  return error;
}
