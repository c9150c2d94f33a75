import {
  BadRequestException,
  Inject,
  Injectable,
  NotFoundException,
  UnprocessableEntityException,
} from '@nestjs/common';
import { LockService, WithLock } from 'nestjs-lock';
import { STORAGE, type Storage } from '../storage/storage.js';

/** An account and its balance, in cents. */
export interface Account {
  readonly accountId: string;
  readonly balance: number;
}

/** The two accounts after a transfer. */
export interface Transfer {
  readonly amount: number;
  readonly from: Account;
  readonly to: Account;
}

const balanceKey = (accountId: string): string => `balance:${accountId}`;

/** Balances kept as plain numbers; every change holds the lock of each account it touches. */
@Injectable()
export class AccountsService {
  constructor(
    private readonly locks: LockService,
    @Inject(STORAGE) private readonly storage: Storage,
  ) {}

  /** Opens (or resets) an account; its lock key comes from the parameter named `accountId`. */
  @WithLock('account:<accountId>', { wait: '5s' })
  async open(accountId: string, balance: number): Promise<Account> {
    await this.storage.set({ [balanceKey(accountId)]: String(balance) });
    return { accountId, balance };
  }

  /** @throws NotFoundException (404) for an account that was never opened */
  async get(accountId: string): Promise<Account> {
    const balance = await this.storage.get(balanceKey(accountId));
    if (balance === null) throw new NotFoundException(`Account "${accountId}" does not exist.`);
    return { accountId, balance: Number(balance) };
  }

  /**
   * Moves `amount` from one account to the other while holding both accounts' locks. `using` takes the
   * keys all or none, in a stable order, so a transfer A→B and one B→A at the same moment queue up
   * instead of each holding one account and waiting forever for the other.
   * @throws UnprocessableEntityException (422) when `from` cannot cover `amount`
   * @throws LockNotAcquiredError (409 over HTTP) when an account stays busy for 5 s
   */
  async transfer(from: string, to: string, amount: number): Promise<Transfer> {
    if (from === to) throw new BadRequestException('A transfer needs two different accounts.');
    return this.locks.using(
      [`account:${from}`, `account:${to}`],
      async () => {
        const [source, target] = await Promise.all([this.get(from), this.get(to)]);
        if (source.balance < amount) {
          throw new UnprocessableEntityException(`Account "${from}" cannot cover ${amount}.`);
        }
        const after = { from: source.balance - amount, to: target.balance + amount };
        // the lock keeps other writers out between the reads and this write; MSET writes both at once
        await this.storage.set({ [balanceKey(from)]: String(after.from), [balanceKey(to)]: String(after.to) });
        return { amount, from: { accountId: from, balance: after.from }, to: { accountId: to, balance: after.to } };
      },
      { wait: '5s' },
    );
  }
}
