export { EtcdLockStore } from './etcd-lock-store.js';
export { MIN_ETCD_TTL, type EtcdLockStoreOptions } from './etcd-options.js';
export type { Etcd3Client } from './etcd-client.js';
