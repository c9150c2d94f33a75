import { Redis } from 'ioredis';
import { redactCredentials, redactValue } from './redact.js';

describe('redactCredentials', () => {
  it.each<[string, string]>([
    ['valkey://admin:S3cr3t@db:6379', 'valkey://***@db:6379'],
    ['redis://:S3cr3t@db:6379/0', 'redis://***@db:6379/0'],
    ['rediss://admin:p@ss@db:6380', 'rediss://***@db:6380'],
    ['redis://db:6379?password=S3cr3t&db=1', 'redis://db:6379?password=***&db=1'],
    ['no URL at all', 'no URL at all'],
    ['redis://db:6379', 'redis://db:6379'],
  ])('turns %s into %s', (text, expected) => {
    expect(redactCredentials(text)).toBe(expected);
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

  it('keeps no trace of the credentials an ioredis client holds', () => {
    const client = new Redis({ lazyConnect: true, password: 'S3cr3t' });
    expect(JSON.stringify(redactValue({ redis: client }))).not.toContain('S3cr3t');
    client.disconnect();
  });
});
