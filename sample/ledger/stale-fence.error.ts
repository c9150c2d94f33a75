import { ConflictException } from '@nestjs/common';

/** The ledger refused a write whose fence is lower than one it already accepted (409 over HTTP). */
export class StaleFenceError extends ConflictException {
  constructor(
    readonly account: string,
    readonly fence: number,
    readonly highest: number,
  ) {
    super(
      `Ledger "${account}" refused a write with fence ${fence}: it already accepted fence ${highest}, ` +
        'so the writer lost its lock before it wrote.',
    );
  }
}
