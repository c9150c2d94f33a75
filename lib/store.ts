// The `nestjs-lock/store` entry point: what a store implements and the engine asks of it. An application that
// uses the stores this package ships needs nothing from here.
export type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  ReleaseWatch,
} from './interfaces/lease.interface.js';
export type { LockStore, LockStoreHealth, LockStoreVerification } from './interfaces/lock-store.interface.js';
export type { LockStoreCapabilities, LockStoreCapabilityName } from './interfaces/store-capabilities.interface.js';
export type { LeaseLimits } from './interfaces/lease-limits.interface.js';
export type {
  LockListing,
  LockListingPage,
  LockListingQuery,
  LockRevocation,
  LockRevoking,
} from './interfaces/lock-listing.interface.js';
export type { ResponseRecords } from './interfaces/response-records.interface.js';
export type { DirectGrant, HandOverResult, WaitingLine } from './interfaces/waiting-line.interface.js';
export type {
  PermitConflict,
  PermitGrant,
  PermitHolderState,
  PermitMode,
  PermitRefusal,
  PermitRequest,
  PermitResult,
  PermitShape,
  PermitState,
  PermitStore,
} from './interfaces/permit-store.interface.js';
