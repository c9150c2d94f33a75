// The `nestjs-lock/admin` entry point: the page, JSON API and forced release for operators (LockAdminModule),
// and the shapes `LockService.list`, `describe` and `forceRelease` answer with.
export { LockAdminModule } from './admin/lock-admin.module.js';
export type { LockAdminOptions } from './admin/lock-admin-options.js';
export type { TemplateStatistics } from './admin/admin-statistics.js';
export type {
  ForcedRelease,
  LockHolderSummary,
  LockKind,
  LockList,
  LockListOptions,
  LockSummary,
} from './interfaces/lock-summary.interface.js';
