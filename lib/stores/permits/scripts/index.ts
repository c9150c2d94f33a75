export { PERMIT_ACQUIRE, permitAcquireArgs } from './permit-acquire.script.js';
export { PERMIT_EXTEND } from './permit-extend.script.js';
export { PERMIT_INSPECT } from './permit-inspect.script.js';
export { PERMIT_LEAVE_LINE, permitLeaveLineArgs } from './permit-leave-line.script.js';
export { PERMIT_RELEASE, permitReleaseArgs } from './permit-release.script.js';
export type { PermitNotices } from './permit-script.js';
