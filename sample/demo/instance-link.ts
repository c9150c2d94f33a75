import type { INestApplication } from '@nestjs/common';

/** What an instance tells the demo that started it. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly url: string;
}

/**
 * When the demo started this process (it has an IPC channel): tells it where the app listens, and shuts
 * the app down if the demo goes away, however it ends (the channel closes even on SIGKILL).
 */
export function linkToDemo(app: INestApplication, url: string): void {
  if (!process.send) return;
  process.send({ type: 'ready', url } satisfies ReadyMessage);
  // the channel alone must not keep this process alive once the app has closed
  process.channel?.unref();
  process.once('disconnect', () => {
    setTimeout(() => process.exit(1), 5000).unref();
    void app.close().finally(() => process.exit(0));
  });
}
