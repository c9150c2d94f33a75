export { EtcdLockStore } from './etcd-lock-store.js';
export { MIN_ETCD_TTL, type Etcd3ClientLike, type EtcdLockStoreOptions } from './etcd-options.js';
