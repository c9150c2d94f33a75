import type { AcquireRequest } from '../../interfaces/lease.interface.js';
import type { PermitShape } from '../../interfaces/permit-store.interface.js';
import type { LockSettings } from '../../options/lock-settings.js';
import { encodeHolder } from '../lock-holder.js';

/** An acquire request, with the permit shape it asks for when it asks for a permit (see `PermitLeaseStore`). */
export interface ShapedRequest extends AcquireRequest {
  readonly shape?: PermitShape;
}

/** What the store is asked to grant for one attempt of `token` on `key`; a mutex request carries no shape. */
export function acquireRequest(
  key: string,
  token: string,
  settings: LockSettings,
  waiting?: AcquireRequest['waiting'],
): ShapedRequest {
  const request = {
    key,
    token,
    ttl: settings.ttl,
    fencing: settings.fencing,
    holder: encodeHolder(settings.label),
    waiting,
  };
  return settings.shape ? { ...request, shape: settings.shape } : request;
}
