import { Redis } from 'ioredis';
import { isSecretOptionName, redactCredentials, redactUrl, redactValue } from './redact.js';

describe('redactCredentials', () => {
  it.each<[string, string]>([
    ['valkey://admin:S3cr3t@db:6379', 'valkey://***@db:6379'],
    ['redis://:S3cr3t@db:6379/0', 'redis://***@db:6379/0'],
    ['rediss://admin:p@ss@db:6380', 'rediss://***@db:6380'],
    ['redis://db:6379?password=S3cr3t&db=1', 'redis://db:6379?password=***&db=1'],
    ['cache.example.net:6380,password=S3cr3t,ssl=True', 'cache.example.net:6380,password=***'],
    ['host=db user=app password=S3cr3t dbname=app', 'host=db user=app password=***'],
    ["host=db password='S3 cr\\'3t' dbname=app", 'host=db password=***'],
    ['host=db password=Tr0ub&4#x dbname=app', 'host=db password=***'],
    ['Host=db;Password="a;b";Database=app', 'Host=db;Password=***'],
    ['Server=db;PASSWORD = my secret;', 'Server=db;PASSWORD =***'],
    ['password=S3cr3t', 'password=***'],
    ['no URL at all', 'no URL at all'],
    ['redis://db:6379', 'redis://db:6379'],
    ['redis//:S3cr3t@db:6379', 'redis//***@db:6379'],
    ['rediss//:S3cr3t@h:3', 'rediss//***@h:3'],
    ['redis:/admin:S3cr3t@db', 'redis:/***@db'],
    ['redis:S3cr3t@db:6379', 'redis:***@db:6379'],
    ['//admin:S3cr3t@db:6379', '//***@db:6379'],
    ['got redis//:S3cr3t@db, then more', 'got redis//***@db, then more'],
    ['mail:<to>@example', 'mail:<to>@example'],
    ['@WithLock(Job.run)', '@WithLock(Job.run)'],
  ])('turns %s into %s', (text, expected) => {
    expect(redactCredentials(text)).toBe(expected);
  });
});

describe('redactUrl', () => {
  it.each<[string, string]>([
    ['redis//:S3cr3t@db:6379', 'redis//***@db:6379'],
    ['redis:/admin:S3 cr3t@db:6379', 'redis:/***@db:6379'],
    ['admin:S3cr3t@etcd-0', '***@etcd-0'],
    ['redis://db:6379', 'redis://db:6379'],
    ['cache.example.net:6380,password=S3cr3t', 'cache.example.net:6380,password=***'],
    ['host=db password=p@ss#1 dbname=app', 'host=db password=***'],
  ])('turns the URL %s into %s, whatever part of it is malformed', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('redactValue', () => {
  it('keeps values without secrets as they are, the same object included', () => {
    const options = { ttl: 1000, retry: { factor: 2 } };
    expect(redactValue(options)).toBe(options);
    expect(redactValue(42)).toBe(42);
  });

  it('hides password fields, URL credentials, and objects other than plain ones', () => {
    class Connection {
      constructor(readonly password: string) {}
    }
    const redacted = redactValue({
      host: 'db',
      password: 'S3cr3t',
      url: 'redis://a:S3cr3t@db',
      connection: new Connection('S3cr3t'),
    });
    expect(redacted).toEqual({ host: 'db', password: '***', url: 'redis://***@db', connection: '[Connection]' });
  });

  it('hides a private key given as text, as TLS options take it', () => {
    const key = '-----BEGIN PRIVATE KEY-----\nS3cr3t';
    expect(redactValue({ tls: { key, cert: 'public' }, privateKey: key })).toEqual({
      tls: { key: '***', cert: 'public' },
      privateKey: '***',
    });
  });

  it('keeps no trace of the credentials an ioredis client holds', () => {
    const client = new Redis({ lazyConnect: true, password: 'S3cr3t' });
    expect(JSON.stringify(redactValue({ redis: client }))).not.toContain('S3cr3t');
    client.disconnect();
  });
});

describe('isSecretOptionName', () => {
  it.each<[string, boolean]>([
    ['password', true],
    ['redis.password', true],
    ['redis.sentinelPassword', true],
    ['etcd.pasword', true],
    ['tls.privateKey', true],
    ['postgres.password', true],
    ['redis.host', false],
    ['@WithLock(Job.run).ttl', false],
    ['etcd.hosts[0]', false],
    ['redis.token', true],
    ['@WithLock(Users.resetPassword)', false],
    ['@WithLock(Users.resetPassword).ttl', false],
  ])('%s holds a secret: %s', (option, secret) => {
    expect(isSecretOptionName(option)).toBe(secret);
  });
});
