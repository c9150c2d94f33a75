import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { closestName, editDistance } from './closest-name.js';
import { CALL_OPTIONS, checkOptionNames, TRY_OPTIONS, USING_OPTIONS, WITH_LOCK_OPTIONS } from './option-names.js';
import { MODULE_OPTIONS } from '../lock.module-options.js';

/** The error `checkOptionNames` throws, or a failure when it throws none. */
function refusal(options: object, kind = MODULE_OPTIONS, scope?: string): LockConfigurationError {
  try {
    checkOptionNames(options, kind, scope);
  } catch (error) {
    expect(error).toBeInstanceOf(LockConfigurationError);
    return error as LockConfigurationError;
  }
  throw new Error(`checkOptionNames accepted ${JSON.stringify(options)}`);
}

describe('editDistance', () => {
  it.each<[string, string, number]>([
    ['wait', 'wait', 0],
    ['holdAtleast', 'holdAtLeast', 0],
    ['wiat', 'wait', 1],
    ['tll', 'ttl', 1],
    ['fencng', 'fencing', 1],
    ['keyprefx', 'keyPrefix', 1],
    ['ttl', 'label', 4],
  ])('counts %s → %s as %i edits', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });
});

describe('closestName', () => {
  const known = ['ttl', 'wait', 'retry', 'fencing', 'redis', 'redlock', 'timeout'];

  it('suggests the nearest known name within a third of the length, or the one the name starts with', () => {
    expect(closestName('fencng', known)).toBe('fencing');
    expect(closestName('wiat', known)).toBe('wait');
    expect(closestName('redisUrl', known)).toBe('redis');
    expect(closestName('timeoutMs', known)).toBe('timeout');
  });

  it('suggests nothing for a name that is close to none', () => {
    expect(closestName('colour', known)).toBeUndefined();
    expect(closestName('x', ['ttlx'])).toBeUndefined();
  });
});

describe('checkOptionNames', () => {
  it('accepts every known name, and leaves a missing options object to the caller', () => {
    expect(() => checkOptionNames({ ttl: 1000, fencing: true, redis: 'redis://x' }, MODULE_OPTIONS)).not.toThrow();
    expect(() => checkOptionNames(undefined, MODULE_OPTIONS)).not.toThrow();
  });

  it('names an unknown option and the known one it is closest to', () => {
    const error = refusal({ fencng: true });
    expect(error.option).toBe('fencng');
    expect(error.message).toBe(
      'Invalid nestjs-lock option "fencng": got true; LockModule options have no such option; did you mean "fencing"?',
    );
  });

  it('lists the known names when none is close', () => {
    expect(refusal({ colour: 'blue' }, WITH_LOCK_OPTIONS, '@WithLock(Job.run)').message).toMatch(
      /"@WithLock\(Job\.run\)\.colour".*known ones are ttl, wait, retry/,
    );
  });

  it('says where a misplaced option belongs, and what a decorator option means on a direct call', () => {
    expect(refusal({ url: 'redis://db:6379' }).message).toMatch(/connection URL goes in "redis"/);
    expect(refusal({ onContention: 'skip' }, CALL_OPTIONS).message).toMatch(
      /"onContention".*no meaning in lock options: it is an option of @WithLock/,
    );
    expect(refusal({ holdAtLeast: '50s' }, CALL_OPTIONS).message).toMatch(/lock\.release\(keepFor\)/);
    expect(refusal({ wait: 100 }, TRY_OPTIONS).message).toMatch(/tryAcquire\(\) never waits/);
  });

  it('takes onLost for a section (using, @WithLock, module defaults), and says what to do instead on acquire()', () => {
    for (const kind of [USING_OPTIONS, WITH_LOCK_OPTIONS, MODULE_OPTIONS]) {
      expect(() => checkOptionNames({ onLost: 'throw' }, kind)).not.toThrow();
    }
    for (const kind of [CALL_OPTIONS, TRY_OPTIONS]) {
      expect(refusal({ onLost: 'throw' }, kind).message).toMatch(
        /"onLost".*it is an option of using\(\) and @WithLock.*lock\.signal/,
      );
    }
  });

  it('never prints the password of a URL it got under an unknown name', () => {
    const error = refusal({ redisUrl: 'redis://admin:S3cr3t@db:6379' });
    expect(error.message).toContain('did you mean "redis"?');
    expect(`${error.message} ${JSON.stringify(error.value)}`).not.toContain('S3cr3t');
  });
});

describe('the value of an unknown option named as a secret', () => {
  it('is never shown, in the message or on the error', () => {
    for (const [options, scope] of [
      [{ password: 'hunter2' }, 'redis'],
      [{ pasword: 'hunter2' }, 'etcd'],
      [{ sentinelPassword: 'hunter2' }, ''],
    ] as const) {
      const error = refusal(options, MODULE_OPTIONS, scope || undefined);
      expect(error.message).not.toContain('hunter2');
      expect(error.message).toContain('got a string (not shown)');
      expect(JSON.stringify(error.value)).not.toContain('hunter2');
    }
  });
});
