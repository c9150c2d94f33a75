import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockInfo } from '../interfaces/lock-info.interface.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import { Campaign, type CampaignHost } from './campaign.js';
import type { Leadership } from './leadership.js';
import type { LeadershipHandle } from './leadership-handle.js';
import type { LeaderInfo } from './leader-info.js';
import { leaderKey } from './leader-key.js';
import { checkLeadershipName, resolveLeadershipOptions, type LeadershipOptions } from './leadership-options.js';

/** What the leaderships of one manager need from it, beyond a campaign's needs. */
export interface LeadershipsHost extends CampaignHost {
  /**
   * The lease ttl in ms for `ttl` as given (`undefined`: the manager's default), checked against the store; a
   * refusal names the option `<scope>.ttl`.
   */
  leaseTtl(ttl: number | undefined, scope: string): number;
  /** Whether the manager's shutdown has begun. */
  readonly closing: boolean;
  inspect(key: string): Promise<LockInfo>;
}

/**
 * The campaigns of one manager, one per leadership name: starts them (`lead`), answers `isLeader`, and resigns
 * them all when the manager shuts down.
 */
export class Leaderships {
  private readonly campaigns = new Map<string, Campaign>();

  constructor(private readonly host: LeadershipsHost) {}

  /**
   * Campaigns for `name` until stopped, running `fn` with each term this instance wins.
   * @throws LockConfigurationError for a bad name, function or option, a ttl the store cannot grant, or a
   *   name this manager already campaigns for
   * @throws LockStoreError once the manager's shutdown has begun
   */
  lead(name: string, fn: (leadership: Leadership) => unknown, options?: LeadershipOptions): LeadershipHandle {
    const scope = `lead(${typeof name === 'string' ? name : typeof name})`;
    checkLeadershipName(name, 'lead() name');
    if (typeof fn !== 'function') throw new LockConfigurationError(`${scope} fn`, fn, 'expected a function');
    const settings = resolveLeadershipOptions(options, scope);
    const ttl = this.host.leaseTtl(settings.ttl, scope);
    if (this.host.closing)
      throw new LockStoreError('acquire', leaderKey(name), undefined, 'the lock service is shutting down');
    if (this.campaigns.has(name)) {
      throw new LockConfigurationError(
        scope,
        name,
        'this manager campaigns for that leadership already; stop() its handle first, or share one campaign',
      );
    }
    const campaign = new Campaign({ name, fn, ttl, backoff: settings.backoff }, this.host);
    this.campaigns.set(name, campaign);
    const stop = (): Promise<void> => {
      if (this.campaigns.get(name) === campaign) this.campaigns.delete(name);
      return campaign.stop('stopped');
    };
    return {
      name,
      get isLeader() {
        return campaign.isLeader;
      },
      get term() {
        return campaign.leadership?.term;
      },
      stop,
    };
  }

  /** Whether this manager leads `name` right now. */
  isLeader(name: string): boolean {
    return this.campaigns.get(name)?.isLeader ?? false;
  }

  /** Who leads `name`, as the store tells it. */
  async inspect(name: string): Promise<LeaderInfo> {
    checkLeadershipName(name, 'inspectLeader() name');
    const { held, fence, holder, remainingTtl } = await this.host.inspect(leaderKey(name));
    return {
      led: held,
      ...(fence === undefined ? {} : { term: fence }),
      ...(held && holder ? { leader: holder } : {}),
      ...(held && remainingTtl !== undefined ? { remainingTtl } : {}),
    };
  }

  /**
   * Resigns every campaign (the shutdown): their terms' signals abort at once; resolves once each function
   * returned and its lease was released.
   */
  resignAll(): Promise<void> {
    const campaigns = [...this.campaigns.values()];
    this.campaigns.clear();
    return Promise.all(campaigns.map((campaign) => campaign.stop('shutdown'))).then(() => undefined);
  }
}
