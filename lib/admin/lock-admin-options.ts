import type { CanActivate, Type } from '@nestjs/common';

/** Options of `LockAdminModule.forRoot`. */
export interface LockAdminOptions {
  /** Where the page and its API are served. @default '/locks' */
  readonly path?: string;
  /**
   * A Nest guard class that every route of the page and its API passes first (authentication: a bearer token,
   * a session, an internal network). Without one, the routes are as open as the application's other routes.
   */
  readonly guard?: Type<CanActivate>;
  /**
   * Whether an operator may force-release a lock (`POST {path}/api/locks/:key/release` and the page's button).
   * Off, the route answers 403 and the page shows no button. @default false
   */
  readonly forceRelease?: boolean;
}

/** The path and switches the module checked. */
export interface CheckedAdminOptions {
  readonly path: string;
  readonly guard?: Type<CanActivate>;
  readonly forceRelease: boolean;
}
