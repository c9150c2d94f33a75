import { ACQUIRE } from './acquire.script.js';
import { EXTEND_MANY } from './extend-many.script.js';
import { EXTEND } from './extend.script.js';
import { HAND_OVER } from '../line/hand-over.script.js';
import { LEAVE_LINE } from '../line/leave-line.script.js';
import type { LuaScript } from './lua-script.js';
import { RAISE_FENCE } from './raise-fence.script.js';
import { REGRANT } from './regrant.script.js';
import { RELEASE } from './release.script.js';
import { RELEASE_UNMARKED } from './release-unmarked.script.js';

export { ACQUIRE, acquireArgs, type LinePlace } from './acquire.script.js';
export { EXTEND } from './extend.script.js';
export { EXTEND_MANY } from './extend-many.script.js';
export { luaScript, type LuaScript } from './lua-script.js';
export { RAISE_FENCE } from './raise-fence.script.js';
export { REGRANT } from './regrant.script.js';
export { RELEASE, releaseArgs, type ReleaseCall } from './release.script.js';
export { RELEASE_UNMARKED } from './release-unmarked.script.js';

/** Every script of the lock stores, for loading them at startup (`verify`) and checking them (`health`). */
export const ALL_SCRIPTS: readonly LuaScript[] = [
  ACQUIRE,
  RELEASE_UNMARKED,
  RELEASE,
  HAND_OVER,
  LEAVE_LINE,
  EXTEND,
  EXTEND_MANY,
  RAISE_FENCE,
  REGRANT,
];
