import { BadRequestException, ConflictException, HttpException, NotFoundException } from '@nestjs/common';
import { keptHttpException, replayedHttpException } from './kept-http-exception.js';

class SoldOut extends ConflictException {}

class Teapot extends HttpException {
  constructor() {
    super({ message: 'short and stout' }, 418);
  }
}

class OrderInvalid extends BadRequestException {}

/** What a store holds of a kept exception. */
function stored(exception: HttpException): string {
  return JSON.stringify(keptHttpException(exception));
}

/** The exception a kept one is thrown again as, after the round trip through JSON a store makes. */
function roundTrip(exception: HttpException): HttpException {
  return replayedHttpException(JSON.parse(stored(exception)) as never);
}

describe('kept HTTP exceptions', () => {
  it("throws one of Nest's own classes again as that class, with its body, status and error code", () => {
    const thrown = new NotFoundException('no such order', { errorCode: 'ORDER_MISSING' });
    const replayed = roundTrip(thrown);
    expect(replayed).toBeInstanceOf(NotFoundException);
    expect(replayed.getResponse()).toEqual(thrown.getResponse());
    expect(replayed.getStatus()).toBe(404);
    expect(replayed.message).toBe(thrown.message);
    expect((replayed as { errorCode?: string }).errorCode).toBe('ORDER_MISSING');
  });

  it("throws an application's subclass again as the class of Nest's it extends", () => {
    const replayed = roundTrip(new SoldOut({ message: 'sold out' }));
    expect(replayed).toBeInstanceOf(ConflictException);
    expect(replayed).not.toBeInstanceOf(SoldOut);
    expect(replayed.getResponse()).toEqual({ message: 'sold out' });
  });

  it('throws an HttpException for a class that extends none of Nest’s, and for a string body', () => {
    const teapot = roundTrip(new Teapot());
    expect(Object.getPrototypeOf(teapot)).toBe(HttpException.prototype);
    expect([teapot.getStatus(), teapot.getResponse()]).toEqual([418, { message: 'short and stout' }]);
    const plain = roundTrip(new HttpException('nope', 409));
    expect(Object.getPrototypeOf(plain)).toBe(HttpException.prototype);
    expect([plain.getStatus(), plain.getResponse()]).toEqual([409, 'nope']);
  });

  it("keeps an error given as the body as the status text Nest sends for it, none of the error's fields", () => {
    const failure = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      detail: 'Key (email)=(alice@example.com) already exists.',
      parameters: ['alice@example.com', 'pbkdf2$secret-hash'],
    });
    const thrown = new ConflictException(failure);
    expect(stored(thrown)).not.toMatch(/alice|secret|duplicate/);
    const replayed = roundTrip(thrown);
    expect(replayed).toBeInstanceOf(ConflictException);
    expect([replayed.getStatus(), replayed.getResponse()]).toEqual([409, { statusCode: 409, message: 'Conflict' }]);
    expect(replayed.message).not.toMatch(/duplicate/);
  });

  it("gives the replay the thrown class's name, message and error code, whatever Nest's version does with them", () => {
    class Refused extends OrderInvalid {
      override readonly errorCode = 'ORDER_INVALID';
    }
    const thrown = new Refused({ message: ['quantity must be positive'], error: 'Bad Request' });
    const replayed = roundTrip(thrown);
    expect(replayed).toBeInstanceOf(BadRequestException);
    expect([replayed.name, replayed.message]).toEqual(['Refused', 'Refused']);
    expect((replayed as { errorCode?: string }).errorCode).toBe('ORDER_INVALID');
    expect(roundTrip(new OrderInvalid({ message: [] })).message).toBe('Order Invalid');
  });

  it('keeps nothing of a body JSON cannot carry, so the retry runs again instead of failing the first answer', () => {
    const cyclic: Record<string, unknown> = { message: 'loop' };
    cyclic.self = cyclic;
    expect(keptHttpException(new BadRequestException(cyclic))).toBeUndefined();
  });

  it('trusts no class name a record gives against its status, and reads records kept without one', () => {
    const wrongStatus = replayedHttpException({ status: 400, body: { message: 'x' }, exception: 'ConflictException' });
    expect(wrongStatus).not.toBeInstanceOf(ConflictException);
    expect(wrongStatus.getStatus()).toBe(400);
    for (const exception of ['Object', 'constructor', 'toString', 'HttpException']) {
      const unknown = replayedHttpException({ status: 400, body: { message: 'x' }, exception });
      expect(Object.getPrototypeOf(unknown)).toBe(HttpException.prototype);
    }
    const foreign = replayedHttpException({
      status: 400,
      body: 'x',
      errorCode: { toString: 'x' } as never,
      name: 7 as never,
    });
    expect([(foreign as { errorCode?: unknown }).errorCode, foreign.name]).toEqual([undefined, 'HttpException']);
    const older = replayedHttpException({ status: 400, body: { message: 'x' } });
    expect(older).not.toBeInstanceOf(BadRequestException);
    expect(older.getResponse()).toEqual({ message: 'x' });
  });
});
