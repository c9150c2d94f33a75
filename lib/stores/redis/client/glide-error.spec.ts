import { failureKind } from '../../../utils/failure-kind.js';
import { fromGlideError } from './glide-error.js';

/** An error as GLIDE makes them: its class name and its core's message. */
function glideError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

describe('fromGlideError', () => {
  it('puts the error kinds GLIDE names back into Redis reply codes, keeping the original as the cause', () => {
    const original = glideError(
      'RequestError',
      'An error was signalled by the server: - NoScriptError: No matching script. Please use EVAL.',
    );
    const error = fromGlideError(original) as Error;
    expect(error.message).toBe('NOSCRIPT No matching script. Please use EVAL.');
    expect(error.cause).toBe(original);
    const denied = 'An error was signalled by the server: - PermissionDenied: no permissions to run the eval command';
    expect(failureKind(fromGlideError(glideError('RequestError', denied)))).toBe('NOPERM');
  });

  it('reads a reply GLIDE passes on with its own code as the code', () => {
    const wrongType = glideError('RequestError', 'WRONGTYPE: Operation against a key holding the wrong kind of value');
    expect((fromGlideError(wrongType) as Error).message).toBe(
      'WRONGTYPE Operation against a key holding the wrong kind of value',
    );
  });

  it('tells a request GLIDE gave up from a connection that is closed', () => {
    expect(failureKind(fromGlideError(glideError('TimeoutError', 'Request timed out')))).toBe('timeout');
    expect(failureKind(fromGlideError(glideError('ClosingError', '')))).toBe('not connected');
  });

  it('passes anything else on as it is', () => {
    const other = glideError('RequestError', 'An error was signalled by the server: - SomethingNew: what it says');
    expect(fromGlideError(other)).toBe(other);
    expect(fromGlideError('not an error')).toBe('not an error');
  });
});
