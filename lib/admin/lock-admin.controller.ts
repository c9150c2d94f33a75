import {
  BadRequestException,
  Controller,
  ForbiddenException,
  Get,
  Header,
  Headers,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  UseGuards,
  type Type,
} from '@nestjs/common';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { ForcedRelease, LockList, LockSummary } from '../interfaces/lock-summary.interface.js';
import { ADMIN_PAGE_POLICY, adminPage } from './admin-page.js';
import type { TemplateStatistics } from './admin-statistics.js';
import { AdminLocks } from './admin-locks.js';
import type { CheckedAdminOptions } from './lock-admin-options.js';

/** The header a release must carry: a cross-site form cannot set it, so a page elsewhere cannot release. */
export const RELEASE_HEADER = 'x-lock-admin';

/** What a request tells of its sender, on Express and Fastify alike. */
interface SenderRequest {
  readonly ip?: string;
  readonly user?: { readonly id?: unknown; readonly name?: unknown; readonly username?: unknown };
}

/**
 * The controller of the page and its API under `options.path`, made per `LockAdminModule.forRoot` (the path
 * and the guard are the module's options).
 */
export function lockAdminController(options: CheckedAdminOptions): Type {
  @Controller(options.path)
  class LockAdminController {
    constructor(@Inject(AdminLocks) private readonly locks: AdminLocks) {}

    /** The page: held locks refreshed live, hold and wait times per key template. */
    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Content-Security-Policy', ADMIN_PAGE_POLICY)
    @Header('Cache-Control', 'no-store')
    page(): string {
      return adminPage(options.forceRelease);
    }

    /** `{ locks, cursor? }`: the held locks, `prefix`, `limit` and `cursor` as `LockService.list` takes them. */
    @Get('api/locks')
    @Header('Cache-Control', 'no-store')
    async list(
      @Query('prefix') prefix?: string,
      @Query('limit') limit?: string,
      @Query('cursor') cursor?: string,
    ): Promise<LockList> {
      const count = limit === undefined ? undefined : Number(limit);
      return refusedAsBadRequest(() =>
        this.locks.service().list({
          ...(typeof prefix === 'string' && prefix ? { prefix } : {}),
          ...(count === undefined ? {} : { limit: count }),
          ...(typeof cursor === 'string' && cursor ? { cursor } : {}),
        }),
      );
    }

    /** One held lock; 404 while it is free. */
    @Get('api/locks/:key')
    @Header('Cache-Control', 'no-store')
    async describe(@Param('key') key: string): Promise<LockSummary> {
      const lock = await refusedAsBadRequest(() => this.locks.service().describe(key));
      if (!lock) throw new NotFoundException('No lock is held on this key.');
      return lock;
    }

    /** `{ templates }`: hold and wait times per key template. */
    @Get('api/stats')
    @Header('Cache-Control', 'no-store')
    stats(): { templates: TemplateStatistics[] } {
      return { templates: this.locks.statistics() };
    }

    /** Force-releases a lock (403 unless the module allows it, or without the `x-lock-admin: release` header). */
    @Post('api/locks/:key/release')
    @HttpCode(200)
    async release(
      @Param('key') key: string,
      @Headers(RELEASE_HEADER) marker: string | undefined,
      @Req() request: SenderRequest,
    ): Promise<ForcedRelease> {
      if (!options.forceRelease) {
        throw new ForbiddenException(
          'Force release is off: LockAdminModule.forRoot({ forceRelease: true }) allows it.',
        );
      }
      if (marker !== 'release')
        throw new ForbiddenException(`A release needs the header "${RELEASE_HEADER}: release".`);
      return refusedAsBadRequest(() => this.locks.service().forceRelease(key, senderOf(request)));
    }
  }
  if (options.guard) UseGuards(options.guard)(LockAdminController);
  return LockAdminController;
}

/** Runs `call`; a refusal of its arguments or of the store (no listing) becomes a 400 that says why. */
async function refusedAsBadRequest<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof LockConfigurationError) throw new BadRequestException(error.message);
    throw error;
  }
}

/** Who sent a release, for its log line: the guard's user when it set one, and the address. */
function senderOf(request: SenderRequest): string {
  const user = request.user?.id ?? request.user?.username ?? request.user?.name;
  const who = typeof user === 'string' || typeof user === 'number' ? `user ${user}` : 'an anonymous operator';
  return `${who} of the admin API (${request.ip ?? 'unknown address'})`;
}
