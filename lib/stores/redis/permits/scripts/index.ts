import type { LuaScript } from '../../scripts/lua-script.js';
import { PERMIT_ACQUIRE } from './permit-acquire.script.js';
import { PERMIT_EXTEND } from './permit-extend.script.js';
import { PERMIT_INSPECT } from './permit-inspect.script.js';
import { PERMIT_LEAVE_LINE } from './permit-leave-line.script.js';
import { PERMIT_RELEASE } from './permit-release.script.js';

export { PERMIT_ACQUIRE, permitAcquireArgs } from './permit-acquire.script.js';
export { PERMIT_EXTEND } from './permit-extend.script.js';
export { PERMIT_INSPECT } from './permit-inspect.script.js';
export { PERMIT_LEAVE_LINE, permitLeaveLineArgs } from './permit-leave-line.script.js';
export { PERMIT_RELEASE, permitReleaseArgs } from './permit-release.script.js';
export type { PermitNotices } from './permit-script.js';

/** Every permit script, for the Redis store's startup check and health probe to load. */
export const PERMIT_SCRIPTS: readonly LuaScript[] = [
  PERMIT_ACQUIRE,
  PERMIT_RELEASE,
  PERMIT_EXTEND,
  PERMIT_INSPECT,
  PERMIT_LEAVE_LINE,
];
