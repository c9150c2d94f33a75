import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { testRedisUrl } from './support/stores.js';

@Injectable()
class A {
  hi() {
    return 'hi';
  }
}
@Injectable()
class B {
  constructor(readonly a: A) {}
}
@Module({ providers: [A, B] })
class M {}

it('loads nest with DI and talks to redis', async () => {
  const ref = await Test.createTestingModule({ imports: [M] }).compile();
  expect(ref.get(B).a.hi()).toBe('hi');
  const r = new Redis(testRedisUrl());
  expect(await r.ping()).toBe('PONG');
  r.disconnect();
});
