import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { refuseOldServers, versionIn } from './server-version.js';

describe('the Redis server version check', () => {
  it("reads redis_version from an INFO server reply, Valkey's included", () => {
    expect(versionIn('# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n')).toBe('7.0.15');
    expect(versionIn('# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n')).toBe(
      '7.2.4',
    );
    expect(versionIn('# Server\r\nrun_id:abc\r\n')).toBeUndefined();
  });

  it('refuses a server before 7.0 at bootstrap, naming it, its version and the option', () => {
    const refuse = () =>
      refuseOldServers('redlock', [
        { label: '10.0.0.1:6379', version: '7.0.15' },
        { label: '10.0.0.2:6379', version: '6.2.14' },
        { label: '10.0.0.3:6379', version: undefined },
      ]);
    expect(refuse).toThrow(LockConfigurationError);
    expect(refuse).toThrow(
      /"redlock": got the string "Redis 6\.2\.14 at 10\.0\.0\.2:6379"; expected Redis 7\.0 or later, or Valkey/,
    );
  });

  it('takes Redis 7 and later, Valkey, and a server whose INFO was refused', () => {
    expect(() =>
      refuseOldServers('redis', [
        { label: 'a:1', version: '7.0.0' },
        { label: 'b:1', version: '8.2.1' },
        { label: 'c:1', version: undefined },
      ]),
    ).not.toThrow();
  });
});
