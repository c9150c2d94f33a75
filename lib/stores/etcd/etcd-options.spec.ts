import { inspect } from 'node:util';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { leaseSeconds, resolveEtcdOptions, validateEtcdTtl } from './etcd-options.js';

describe('resolveEtcdOptions', () => {
  it('takes several members in one string separated by commas, as an environment variable gives them', () => {
    expect(resolveEtcdOptions({ hosts: 'etcd-0:2379,etcd-1:2379, https://etcd-2:2379' }).hosts).toEqual([
      'etcd-0:2379',
      'etcd-1:2379',
      'https://etcd-2:2379',
    ]);
    expect(resolveEtcdOptions({ hosts: ['[::1]:2379', 'http://10.0.0.1:2379'] }).hosts).toEqual([
      '[::1]:2379',
      'http://10.0.0.1:2379',
    ]);
  });

  it.each([
    ['a member without a port', { hosts: 'etcd-0' }, 'etcd.hosts', '"etcd-0"'],
    ['one member of a list without a port', { hosts: 'etcd-0:2379,etcd-1' }, 'etcd.hosts', '"etcd-1"'],
    ['an array member without a port', { hosts: ['etcd-0:2379', 'https://etcd-1'] }, 'etcd.hosts[1]', 'etcd-1'],
    ['a port out of range', { hosts: 'etcd-0:99999' }, 'etcd.hosts', '99999'],
    ['a scheme etcd3 does not take', { hosts: 'etcd://etcd-0:2379' }, 'etcd.hosts', 'etcd://'],
    ['an empty member between commas', { hosts: 'etcd-0:2379,,etcd-1:2379' }, 'etcd.hosts', '""'],
    ['credentials given as a string', { hosts: 'a:1', credentials: 'x' }, 'etcd.credentials', 'a string'],
    ['credentials without a root certificate', { hosts: 'a:1', credentials: {} }, 'etcd.credentials', 'Object'],
    [
      'a private key without its certificate chain',
      { hosts: 'a:1', credentials: { rootCertificate: Buffer.from('ca'), privateKey: Buffer.from('key') } },
      'etcd.credentials',
      'together',
    ],
  ])('refuses %s at construction, naming the option', (_label, options, option, shown) => {
    const error = (() => {
      try {
        resolveEtcdOptions(options as never);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe(option);
    expect((error as Error).message).toContain(shown);
  });

  it('refuses credentials given as text without showing them: they may be a private key', () => {
    const key = '-----BEGIN PRIVATE KEY-----\nS3cr3t';
    const error = (() => {
      try {
        resolveEtcdOptions({ hosts: 'a:1', credentials: key as never });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect(inspect(error, { depth: null, showHidden: true })).not.toContain('S3cr3t');
  });

  it('fills in the defaults and takes one host or many', () => {
    expect(resolveEtcdOptions({ hosts: '127.0.0.1:2379' })).toMatchObject({
      hosts: ['127.0.0.1:2379'],
      keyPrefix: 'lock:',
      timeout: 3000,
      sessionTtl: 5,
    });
    expect(resolveEtcdOptions({ hosts: ['a:2379', 'https://b:2379'] }).hosts).toEqual(['a:2379', 'https://b:2379']);
  });

  it.each([
    ['no hosts', {}, 'etcd.hosts'],
    ['an empty host list', { hosts: [] }, 'etcd.hosts'],
    ['hosts and a client', { hosts: 'a:1', client: {} }, 'etcd.client'],
    ['a client that is not an etcd3 client', { client: { kv: {} } }, 'etcd.client'],
    ['a timeout of 0', { hosts: 'a:1', timeout: 0 }, 'etcd.timeout'],
    ['a session TTL under etcd’s least lease', { hosts: 'a:1', sessionTtl: 1 }, 'etcd.sessionTtl'],
    ['auth without a password', { hosts: 'a:1', auth: { username: 'root' } }, 'etcd.auth.password'],
    ['auth without a username', { hosts: 'a:1', auth: { password: 'x' } }, 'etcd.auth.username'],
    ['a key prefix with a brace', { hosts: 'a:1', keyPrefix: 'x{' }, 'keyPrefix'],
  ])('refuses %s, naming the option', (_label, options, option) => {
    const error = (() => {
      try {
        resolveEtcdOptions(options as never);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as LockConfigurationError).option).toBe(option);
  });

  it('says what is wrong with auth and that sessionTtl counts seconds', () => {
    const message = (options: object): string => {
      try {
        resolveEtcdOptions(options as never);
      } catch (caught) {
        return (caught as Error).message;
      }
      return '';
    };
    expect(message({ hosts: 'a:1', auth: { username: 'root' } })).toContain('the password is missing');
    expect(message({ hosts: 'a:1', auth: { username: 'root', password: 12345678 } })).not.toContain('12345678');
    expect(message({ hosts: 'a:1', sessionTtl: 5000 })).toContain('expected whole seconds from 2 to 3600');
  });

  it('refuses malformed credentials without showing the password', () => {
    const secret = 'hunter2-very-secret';
    const call = () => resolveEtcdOptions({ hosts: 'a:1', auth: { username: 1, password: secret } as never });
    expect(call).toThrow(LockConfigurationError);
    expect(call).not.toThrow(secret);
  });
});

describe('whole-second leases', () => {
  it('rounds a ttl up to whole seconds and refuses one under 1 s', () => {
    expect([1000, 1001, 1500, 2000, 30_000].map(leaseSeconds)).toEqual([1, 2, 2, 2, 30]);
    expect(() => validateEtcdTtl(999)).toThrow(/at least 1000 ms/);
    expect(() => validateEtcdTtl(1000)).not.toThrow();
  });
});
