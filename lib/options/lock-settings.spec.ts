import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockSectionOptions } from '../interfaces/lock-options.interface.js';
import { DEFAULT_SETTINGS, resolveSettings } from './lock-settings.js';
import { refusalOf } from '../../test/support/refusal.js';

/** The error `resolveSettings` throws for `options`, or a failure when it throws none. */
function refusal(options: unknown, scope?: string): LockConfigurationError {
  return refusalOf(() => resolveSettings(DEFAULT_SETTINGS, options as LockSectionOptions, scope), options);
}

describe('resolveSettings', () => {
  it('returns the base settings when nothing is given', () => {
    expect(resolveSettings(DEFAULT_SETTINGS, undefined)).toBe(DEFAULT_SETTINGS);
    expect(resolveSettings(DEFAULT_SETTINGS, {})).toEqual(DEFAULT_SETTINGS);
  });

  it('applies every given field over the base and converts durations', () => {
    const settings = resolveSettings(DEFAULT_SETTINGS, {
      ttl: '10s',
      wait: '1.5s',
      retry: { minDelay: 10, maxDelay: 100, factor: 1.5 },
      autoRenew: false,
      fencing: true,
      onLost: 'throw',
    });
    expect(settings).toEqual({
      ttl: 10_000,
      wait: 1500,
      retry: { minDelay: 10, maxDelay: 100, factor: 1.5 },
      autoRenew: false,
      fencing: true,
      onLost: 'throw',
    });
  });

  it('keeps the base for retry fields that are not given, and raises maxDelay to a larger minDelay', () => {
    expect(resolveSettings(DEFAULT_SETTINGS, { retry: { factor: 3 } }).retry).toEqual({
      minDelay: 50,
      maxDelay: 1000,
      factor: 3,
    });
    expect(resolveSettings(DEFAULT_SETTINGS, { retry: { minDelay: 5000 } }).retry).toEqual({
      minDelay: 5000,
      maxDelay: 5000,
      factor: 2,
    });
  });

  it('accepts wait: 0 (fail fast) and layers on settings that were already resolved', () => {
    const module = resolveSettings(DEFAULT_SETTINGS, { ttl: 5000, wait: 2000 });
    expect(resolveSettings(module, { wait: 0 })).toEqual({ ...module, wait: 0 });
    expect(DEFAULT_SETTINGS.ttl).toBe(30_000);
  });

  it.each<[string, unknown, string]>([
    ['ttl: 0', { ttl: 0 }, 'ttl'],
    ['ttl: -1', { ttl: -1 }, 'ttl'],
    ['ttl: 1.5', { ttl: 1.5 }, 'ttl'],
    ['ttl: NaN', { ttl: NaN }, 'ttl'],
    ['ttl: Infinity', { ttl: Infinity }, 'ttl'],
    ['ttl: "fast"', { ttl: 'fast' }, 'ttl'],
    ['ttl: null', { ttl: null }, 'ttl'],
    ['ttl: true', { ttl: true }, 'ttl'],
    ['ttl over 2^31-1 ms', { ttl: 2 ** 31 }, 'ttl'],
    ['wait: -1', { wait: -1 }, 'wait'],
    ['wait: NaN', { wait: NaN }, 'wait'],
    ['wait: Infinity', { wait: Infinity }, 'wait'],
    ['wait: "forever"', { wait: 'forever' }, 'wait'],
    ['wait: null', { wait: null }, 'wait'],
    ['retry: "fast"', { retry: 'fast' }, 'retry'],
    ['retry: null', { retry: null }, 'retry'],
    ['retry: 5', { retry: 5 }, 'retry'],
    ['retry: true', { retry: true }, 'retry'],
    ['retry: an array', { retry: [100, 1000] }, 'retry'],
    ['retry.minDelay: 0', { retry: { minDelay: 0 } }, 'retry.minDelay'],
    ['retry.minDelay: -5', { retry: { minDelay: -5 } }, 'retry.minDelay'],
    ['retry.minDelay: 1.5', { retry: { minDelay: 1.5 } }, 'retry.minDelay'],
    ['retry.minDelay: "50"', { retry: { minDelay: '50' } }, 'retry.minDelay'],
    ['retry.minDelay: NaN', { retry: { minDelay: NaN } }, 'retry.minDelay'],
    ['retry.minDelay: null', { retry: { minDelay: null } }, 'retry.minDelay'],
    ['retry.maxDelay below minDelay', { retry: { minDelay: 100, maxDelay: 10 } }, 'retry.maxDelay'],
    ['retry.maxDelay below the default minDelay', { retry: { maxDelay: 10 } }, 'retry.maxDelay'],
    ['retry.maxDelay: Infinity', { retry: { maxDelay: Infinity } }, 'retry.maxDelay'],
    ['retry.maxDelay: "1s"', { retry: { maxDelay: '1s' } }, 'retry.maxDelay'],
    ['retry.factor: 0', { retry: { factor: 0 } }, 'retry.factor'],
    ['retry.factor: 0.5', { retry: { factor: 0.5 } }, 'retry.factor'],
    ['retry.factor: -2', { retry: { factor: -2 } }, 'retry.factor'],
    ['retry.factor: NaN', { retry: { factor: NaN } }, 'retry.factor'],
    ['retry.factor: Infinity', { retry: { factor: Infinity } }, 'retry.factor'],
    ['retry.factor: "2"', { retry: { factor: '2' } }, 'retry.factor'],
    ['retry.factor: null', { retry: { factor: null } }, 'retry.factor'],
    ['autoRenew: "yes"', { autoRenew: 'yes' }, 'autoRenew'],
    ['autoRenew: 1', { autoRenew: 1 }, 'autoRenew'],
    ['autoRenew: null', { autoRenew: null }, 'autoRenew'],
    ['fencing: "true"', { fencing: 'true' }, 'fencing'],
    ['fencing: 0', { fencing: 0 }, 'fencing'],
    ['fencing: {}', { fencing: {} }, 'fencing'],
    ['label: ""', { label: '' }, 'label'],
    ['label: 42', { label: 42 }, 'label'],
    ['a label of 257 characters', { label: 'x'.repeat(257) }, 'label'],
    ['metricKey: ""', { metricKey: '' }, 'metricKey'],
    ['metricKey: null', { metricKey: null }, 'metricKey'],
    ['onLost: "fail"', { onLost: 'fail' }, 'onLost'],
    ['onLost: true', { onLost: true }, 'onLost'],
  ])('refuses %s with a LockConfigurationError naming the option', (_label, options, option) => {
    const error = refusal(options);
    expect(error.option).toBe(option);
    expect(error.message).toContain(`"${option}"`);
    const fields = option.split('.');
    let value: unknown = options;
    for (const field of fields) value = (value as Record<string, unknown>)[field];
    expect(Object.is(error.value, value)).toBe(true);
  });

  it('keeps a label given per call, and a label already resolved when later options give none', () => {
    const labelled = resolveSettings(DEFAULT_SETTINGS, { label: 'Job.run' });
    expect(labelled.label).toBe('Job.run');
    expect(resolveSettings(labelled, { ttl: 1000 }).label).toBe('Job.run');
    expect(resolveSettings(labelled, { label: 'other' }).label).toBe('other');
    expect('label' in resolveSettings(DEFAULT_SETTINGS, { ttl: 1000 })).toBe(false);
  });

  it('names the option inside its scope, so a decorator or module error says where it came from', () => {
    expect(refusal({ ttl: 0 }, 'WithLock(OrdersService.pay)').option).toBe('WithLock(OrdersService.pay).ttl');
    expect(refusal({ retry: { factor: 0 } }, 'LockModule').option).toBe('LockModule.retry.factor');
  });

  it.each<[string, unknown]>([
    ['a string', 'fast'],
    ['a number', 30_000],
    ['true', true],
    ['an array', [{ ttl: 1000 }]],
  ])('refuses options that are %s instead of an object', (_label, options) => {
    expect(refusal(options).option).toBe('options');
    expect(refusal(options, 'LockModule').option).toBe('LockModule');
  });
});
