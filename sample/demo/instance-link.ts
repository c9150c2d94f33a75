import type { INestApplication } from '@nestjs/common';

/** What an instance tells the demo that started it. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly url: string;
}

let app: INestApplication | undefined;

// Started by the demo (there is an IPC channel): exit as soon as the demo goes away, however it ends (the
// channel closes even on SIGKILL). The demo preloads this module (node --import), so this watches from the
// first moment, before the app's own imports load; without the demo it does nothing.
if (process.send) {
  const leave = (): void => {
    setTimeout(() => process.exit(1), 5000).unref();
    void (app ? app.close() : Promise.resolve()).finally(() => process.exit(0));
  };
  process.once('disconnect', leave);
  if (!process.connected) leave();
  // the channel alone must not keep this process alive once the app has closed
  process.channel?.unref();
}

/** Tells the demo (if it started this process) where the app listens; it is closed if the demo goes away. */
export function reportReady(started: INestApplication, url: string): void {
  app = started;
  if (process.connected) process.send?.({ type: 'ready', url } satisfies ReadyMessage);
}
