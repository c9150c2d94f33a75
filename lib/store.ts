// The `nestjs-lock/store` entry point: what a store implements and the engine asks of it. An application that
// uses the stores this package ships needs nothing from here.
export type {
  AcquireRequest,
  AcquireResult,
  DirectGrant,
  HandOverResult,
  LeaseRenewal,
  LockState,
  LockStore,
  LockStoreHealth,
  LockStoreVerification,
  ReleaseWatch,
} from './interfaces/lock-store.interface.js';
export type {
  PermitCapable,
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
