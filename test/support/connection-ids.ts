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
