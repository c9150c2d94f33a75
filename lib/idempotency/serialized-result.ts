/** What of class-transformer the kept form of a result needs. */
interface ClassTransformer {
  instanceToPlain(value: unknown, options?: object): unknown;
  plainToInstance(type: new (...args: never[]) => unknown, value: unknown, options?: object): unknown;
}

/** The options of Nest's `@SerializeOptions()`, as far as they change what is sent. */
interface SerializeOptions {
  readonly type?: new (...args: never[]) => unknown;
  readonly [option: string]: unknown;
}

/** The metadata key of Nest's `@SerializeOptions()` (`CLASS_SERIALIZER_OPTIONS`). */
const SERIALIZE_OPTIONS = 'class_serializer:options';

let loading: Promise<ClassTransformer | undefined> | undefined;

/** class-transformer, when the application has it (Nest's `ClassSerializerInterceptor` needs it); else undefined. */
export function loadClassTransformer(): Promise<ClassTransformer | undefined> {
  loading ??= import('class-transformer').then(
    (module) => {
      const found = module as Partial<ClassTransformer> & { default?: Partial<ClassTransformer> };
      const api = typeof found.instanceToPlain === 'function' ? found : found.default;
      return typeof api?.instanceToPlain === 'function' && typeof api.plainToInstance === 'function'
        ? (api as ClassTransformer)
        : undefined;
    },
    () => undefined,
  );
  return loading;
}

/**
 * The form a handler's result is kept in: what `ClassSerializerInterceptor` makes of it with the handler's or
 * its controller's `@SerializeOptions()`, so that a field it leaves out (`@Exclude()`, a group the options do
 * not name) is neither stored nor sent on replay. A result that holds no class instance, with no `type`
 * option, is kept as it is; so is every result when the application has no class-transformer.
 */
export function serializedResult(
  result: unknown,
  transformer: ClassTransformer | undefined,
  handler: object,
  controller: object,
): unknown {
  if (!transformer || typeof result !== 'object' || result === null) return result;
  const options = (Reflect.getMetadata(SERIALIZE_OPTIONS, handler) ??
    Reflect.getMetadata(SERIALIZE_OPTIONS, controller) ??
    {}) as SerializeOptions;
  if (!options.type && !holdsClassInstance(result)) return result;
  const toPlain = (item: unknown): unknown => {
    if (!item) return item;
    if (!options.type || item instanceof options.type) return transformer.instanceToPlain(item, options);
    return transformer.instanceToPlain(transformer.plainToInstance(options.type, item, options), options);
  };
  return Array.isArray(result) ? result.map(toPlain) : toPlain(result);
}

/** Whether `value` is, or holds in its arrays and plain objects, an instance of a class other than `Date`. */
function holdsClassInstance(value: unknown, depth = 0): boolean {
  if (typeof value !== 'object' || value === null || value instanceof Date || depth > 32) return false;
  if (Array.isArray(value)) return value.some((item) => holdsClassInstance(item, depth + 1));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return true;
  return Object.values(value).some((field) => holdsClassInstance(field, depth + 1));
}
