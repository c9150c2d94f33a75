import { BadRequestException, Body, Controller, Get, Param, Post, Put } from '@nestjs/common';
import { AccountsService, type Account, type Transfer } from './accounts.service.js';

/** Accounts over HTTP; the locking happens in {@link AccountsService}. */
@Controller('accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Put(':accountId')
  open(@Param('accountId') accountId: string, @Body() body: { balance?: unknown }): Promise<Account> {
    return this.accounts.open(accountId, wholeNumber('balance', body?.balance));
  }

  @Get(':accountId')
  get(@Param('accountId') accountId: string): Promise<Account> {
    return this.accounts.get(accountId);
  }

  /** `{ "from": "alice", "to": "bob", "amount": 25 }` */
  @Post('transfers')
  transfer(@Body() body: { from?: unknown; to?: unknown; amount?: unknown }): Promise<Transfer> {
    const { from, to } = body ?? {};
    if (typeof from !== 'string' || typeof to !== 'string' || !from || !to) {
      throw new BadRequestException('"from" and "to" must be account ids.');
    }
    const amount = wholeNumber('amount', body.amount);
    if (amount === 0) throw new BadRequestException('"amount" must be more than 0.');
    return this.accounts.transfer(from, to, amount);
  }
}

function wholeNumber(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new BadRequestException(`"${field}" must be a whole number of cents, 0 or more.`);
  }
  return value;
}
