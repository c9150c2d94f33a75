import type { CommandArgument, RedisPipelinePort } from './redis-client-port.js';

/**
 * A command as an adapter port (node-redis, GLIDE) sends it: its name, its arguments and the key it routes by
 * on a cluster.
 */
export interface QueuedCommand {
  readonly name: string;
  readonly args: readonly CommandArgument[];
  readonly key?: string;
}

/**
 * A pipeline on a client without one of ioredis' shape: its commands are sent together in one tick (which
 * node-redis writes as one batch, and GLIDE's core pipelines on its connection to each node) and each is
 * answered `[error, reply]`, like ioredis' `exec()`.
 */
export class CommandPipeline implements RedisPipelinePort {
  private readonly commands: QueuedCommand[] = [];

  constructor(private readonly send: (command: QueuedCommand) => Promise<unknown>) {}

  evalsha(sha: string, numKeys: number, ...keysAndArgs: CommandArgument[]): this {
    this.commands.push(scriptCommand('EVALSHA', sha, numKeys, keysAndArgs));
    return this;
  }

  get(key: string): this {
    return this.add('GET', [key], key);
  }

  pttl(key: string): this {
    return this.add('PTTL', [key], key);
  }

  type(key: string): this {
    return this.add('TYPE', [key], key);
  }

  lrem(key: string, count: number, value: string): this {
    return this.add('LREM', [key, count, value], key);
  }

  call(command: string, ...args: CommandArgument[]): this {
    return this.add(command, args, undefined);
  }

  async exec(): Promise<Array<[Error | null, unknown]>> {
    // a keyless command (WAIT) goes to the node of the keyed commands after it, as in an ioredis Cluster pipeline
    const routed = this.commands.map((command, index) => {
      const key = command.key ?? this.commands.slice(index + 1).find((later) => later.key !== undefined)?.key;
      return key === undefined ? command : { ...command, key };
    });
    return Promise.all(
      routed.map((command) =>
        this.send(command).then(
          (reply): [Error | null, unknown] => [null, reply],
          (error: unknown): [Error | null, unknown] => [
            error instanceof Error ? error : new Error(String(error)),
            null,
          ],
        ),
      ),
    );
  }

  private add(name: string, args: CommandArgument[], key: string | undefined): this {
    this.commands.push({ name, args, ...(key === undefined ? {} : { key }) });
    return this;
  }
}

/** A script's command (EVAL, EVALSHA), routed on a cluster by its first key. */
export function scriptCommand(
  name: string,
  script: string,
  numKeys: number,
  keysAndArgs: readonly CommandArgument[],
): QueuedCommand {
  const key = numKeys > 0 ? String(keysAndArgs[0]) : undefined;
  return { name, args: [script, numKeys, ...keysAndArgs], ...(key === undefined ? {} : { key }) };
}
