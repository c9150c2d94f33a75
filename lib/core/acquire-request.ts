import type { AcquireRequest } from '../interfaces/lock-store.interface.js';
import type { LockSettings } from '../options/lock-settings.js';
import { encodeHolder } from './lock-holder.js';

/** What the store is asked to grant for one attempt of `token` on `key`. */
export function acquireRequest(
  key: string,
  token: string,
  settings: LockSettings,
  waiting?: AcquireRequest['waiting'],
): AcquireRequest {
  return { key, token, ttl: settings.ttl, fencing: settings.fencing, holder: encodeHolder(settings.label), waiting };
}
