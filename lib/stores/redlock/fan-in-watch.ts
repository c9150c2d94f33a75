import type { ReleaseWatch } from '../../interfaces/lease.interface.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';

/**
 * A release watch fed by several others, one per Redis node: it wakes on a notice heard by any of them.
 * A source may join late (its node answered after the watch was handed out) or never (its pub/sub is
 * down); the waiter's backoff covers what no source hears.
 */
export class FanInWatch extends NotifiableWatch {
  private readonly sources = new Set<ReleaseWatch>();
  private detached = false;

  /** Forwards the notices of `source` until this watch is closed or detached; closes `source` then. */
  add(source: ReleaseWatch): void {
    if (this.detached) {
      source.close();
      return;
    }
    this.sources.add(source);
    void this.forward(source);
  }

  /** Stops listening to every source and wakes the current wait; the watch goes on as a timer. */
  detach(): void {
    this.closeSources();
    this.wake();
  }

  override close(): void {
    this.closeSources();
    super.close();
  }

  private closeSources(): void {
    this.detached = true;
    for (const source of this.sources) source.close();
    this.sources.clear();
  }

  private async forward(source: ReleaseWatch): Promise<void> {
    // a source answers `true` for each notice and `false` once closed; its long timeout never decides
    while (this.sources.has(source)) {
      if (await source.next(MAX_DURATION)) this.wake();
    }
  }
}
