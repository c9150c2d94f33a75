/**
 * Gives `wrapper` everything other decorators may have recorded on `original` (routes, `@Cron`,
 * `SetMetadata`, Swagger) plus its `name` and `length`, so it works in any decorator order.
 */
export function copyMethodIdentity(original: object, wrapper: object): void {
  const reflect = Reflect as unknown as {
    getOwnMetadataKeys?: (target: object) => unknown[];
    getOwnMetadata: (key: unknown, target: object) => unknown;
    defineMetadata: (key: unknown, value: unknown, target: object) => void;
  };
  for (const key of reflect.getOwnMetadataKeys?.(original) ?? []) {
    reflect.defineMetadata(key, reflect.getOwnMetadata(key, original), wrapper);
  }
  for (const property of ['name', 'length'] as const) {
    Object.defineProperty(wrapper, property, {
      value: (original as Record<string, unknown>)[property],
      configurable: true,
    });
  }
}
