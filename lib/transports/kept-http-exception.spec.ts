import { BadRequestException, ConflictException, HttpException, NotFoundException } from '@nestjs/common';
import { keptHttpException, replayedHttpException } from './kept-http-exception.js';

class SoldOut extends ConflictException {}

class Teapot extends HttpException {
  constructor() {
    super({ message: 'short and stout' }, 418);
  }
}

/** The exception a kept one is thrown again as, after the round trip through JSON a store makes. */
function roundTrip(exception: HttpException): HttpException {
  return replayedHttpException(JSON.parse(JSON.stringify(keptHttpException(exception))) as never);
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

  it('trusts no class name a record gives against its status, and reads records kept without one', () => {
    const wrongStatus = replayedHttpException({ status: 400, body: { message: 'x' }, exception: 'ConflictException' });
    expect(wrongStatus).not.toBeInstanceOf(ConflictException);
    expect(wrongStatus.getStatus()).toBe(400);
    for (const exception of ['Object', 'constructor', 'toString', 'HttpException']) {
      const unknown = replayedHttpException({ status: 400, body: { message: 'x' }, exception });
      expect(Object.getPrototypeOf(unknown)).toBe(HttpException.prototype);
    }
    const older = replayedHttpException({ status: 400, body: { message: 'x' } });
    expect(older).not.toBeInstanceOf(BadRequestException);
    expect(older.getResponse()).toEqual({ message: 'x' });
  });
});
