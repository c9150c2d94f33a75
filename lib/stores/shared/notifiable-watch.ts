import type { ReleaseWatch } from '../../interfaces/lease.interface.js';

/** A release watch woken by `wake()` (a notice or a local release); a notice heard between two `next()` calls is kept, not lost. */
export class NotifiableWatch implements ReleaseWatch {
  listeningSince?: number;
  private heard = false;
  private resume?: (heard: boolean) => void;

  constructor(private readonly onClose: (watch: NotifiableWatch) => void = () => undefined) {}

  /** A watch that hears no notices, only local wakes: the fallback when pub/sub is off or unavailable. */
  static timerOnly(): NotifiableWatch {
    return new NotifiableWatch();
  }

  /** Whether its waiter sleeps in `next()` right now (not asking the store, with no notice kept for it). */
  get asleep(): boolean {
    return this.resume !== undefined;
  }

  wake(): void {
    if (this.resume) this.resume(true);
    else this.heard = true;
  }

  next(timeout: number): Promise<boolean> {
    if (this.heard) {
      this.heard = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(false), timeout);
      const finish = (heard: boolean): void => {
        clearTimeout(timer);
        if (this.resume === finish) this.resume = undefined;
        resolve(heard);
      };
      this.resume = finish;
    });
  }

  close(): void {
    this.resume?.(false);
    this.onClose(this);
  }
}
