import type { Redis } from 'ioredis';

/**
 * The ids of the server's connections named `name`, from `CLIENT LIST` (a client sends CLIENT SETNAME for its
 * name option: node-redis' `name`, GLIDE's `clientName`), e.g. to CLIENT KILL them.
 */
export async function connectionIds(admin: Redis, name: string): Promise<string[]> {
  const list = (await admin.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /id=(\d+)/.exec(line)![1]);
}

/**
 * The ids of the server's connections subscribed to at least one channel (`sharded`: to a shard channel, by
 * SSUBSCRIBE), from `CLIENT LIST`; with `name`, only those of that name.
 */
export async function subscriberIds(
  admin: Redis,
  options: { sharded?: boolean; name?: string } = {},
): Promise<string[]> {
  const subscribed = options.sharded ? / ssub=[1-9]/ : / sub=[1-9]/;
  const list = (await admin.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => subscribed.test(line) && (options.name === undefined || line.includes(` name=${options.name} `)))
    .map((line) => /id=(\d+)/.exec(line)![1]);
}
