import 'reflect-metadata';
import { SerializeOptions } from '@nestjs/common';
import { Exclude } from 'class-transformer';
import { loadClassTransformer, serializedResult } from './serialized-result.js';

class Secretive {
  readonly name = 'ann';

  @Exclude()
  readonly secret = 's3cret';
}

class Handlers {
  plain(): void {}

  @SerializeOptions({ type: Secretive })
  typed(): void {}
}

describe('serializedResult', () => {
  const handlers = new Handlers();

  it('keeps a result that holds no class instance as it is', async () => {
    const transformer = await loadClassTransformer();
    const result = { id: 1, at: new Date(0), tags: ['a'] };
    expect(serializedResult(result, transformer, handlers.plain, Handlers)).toBe(result);
  });

  it('leaves out what class-transformer leaves out, in a class instance at any depth and in arrays', async () => {
    const transformer = await loadClassTransformer();
    expect(serializedResult(new Secretive(), transformer, handlers.plain, Handlers)).toEqual({ name: 'ann' });
    expect(serializedResult([new Secretive()], transformer, handlers.plain, Handlers)).toEqual([{ name: 'ann' }]);
    expect(serializedResult({ user: new Secretive() }, transformer, handlers.plain, Handlers)).toEqual({
      user: { name: 'ann' },
    });
  });

  it("makes a plain result the handler's serialize type first, as ClassSerializerInterceptor does", async () => {
    const transformer = await loadClassTransformer();
    const plain = { name: 'ann', secret: 's3cret' };
    expect(serializedResult(plain, transformer, handlers.typed, Handlers)).toEqual({ name: 'ann' });
  });

  it('keeps every result as it is without class-transformer', () => {
    const instance = new Secretive();
    expect(serializedResult(instance, undefined, handlers.plain, Handlers)).toBe(instance);
  });
});
