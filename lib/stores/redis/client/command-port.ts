import { EventEmitter } from 'node:events';
import type { ClientListener, CommandArgument, RedisPipelinePort } from './redis-client-port.js';
import { CommandPipeline, scriptCommand, type QueuedCommand } from './command-pipeline.js';

/**
 * The commands of an adapter port (node-redis, GLIDE) in ioredis' names and reply shapes, each sent as one
 * `QueuedCommand` by the adapter's `send`. An adapter keeps only what its client does its own way: sending,
 * connecting, subscribing, its events and its nodes.
 */
export abstract class CommandPort {
  /** Messages of the channels the port subscribed (`message`, `smessage`). */
  protected readonly messages = new EventEmitter();

  /** Sends one command to the client, and answers with its reply as the client decoded it. */
  abstract send(command: QueuedCommand): Promise<unknown>;

  evalsha(sha: string, numKeys: number, ...keysAndArgs: CommandArgument[]): Promise<unknown> {
    return this.send(scriptCommand('EVALSHA', sha, numKeys, keysAndArgs));
  }

  eval(lua: string, numKeys: number, ...keysAndArgs: CommandArgument[]): Promise<unknown> {
    return this.send(scriptCommand('EVAL', lua, numKeys, keysAndArgs));
  }

  set(key: string, value: CommandArgument, ...options: CommandArgument[]): Promise<string | null> {
    return this.send({ name: 'SET', args: [key, value, ...options], key }) as Promise<string | null>;
  }

  get(key: string): Promise<string | null> {
    return this.send({ name: 'GET', args: [key], key }) as Promise<string | null>;
  }

  mget(...keys: string[]): Promise<Array<string | null>> {
    return this.send({ name: 'MGET', args: keys, key: keys[0] }) as Promise<Array<string | null>>;
  }

  async del(key: string): Promise<number> {
    return Number(await this.send({ name: 'DEL', args: [key], key }));
  }

  async llen(key: string): Promise<number> {
    return Number(await this.send({ name: 'LLEN', args: [key], key }));
  }

  async hexists(key: string, field: string): Promise<number> {
    // RESP3 may answer with a boolean
    return Number(await this.send({ name: 'HEXISTS', args: [key, field], key }));
  }

  async scan(cursor: string, ...options: CommandArgument[]): Promise<[string, string[]]> {
    const reply = (await this.send({ name: 'SCAN', args: [cursor, ...options] })) as [unknown, unknown[]];
    return [String(reply[0]), reply[1].map(String)];
  }

  script(subcommand: string, ...args: string[]): Promise<unknown> {
    return this.send({ name: 'SCRIPT', args: [subcommand, ...args] });
  }

  async config(subcommand: string, pattern: string): Promise<unknown> {
    return flatPairs(await this.send({ name: 'CONFIG', args: [subcommand, pattern] }));
  }

  async info(section: string): Promise<string> {
    // RESP3 answers INFO with a verbatim string, which a client may hand over as an object
    return String(await this.send({ name: 'INFO', args: [section] }));
  }

  ping(): Promise<unknown> {
    return this.send({ name: 'PING', args: [] });
  }

  pipeline(): RedisPipelinePort {
    return new CommandPipeline((command) => this.send(command));
  }

  on(event: string, listener: ClientListener): this {
    this.messages.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off(event: string, listener: ClientListener): this {
    this.messages.off(event, listener as (...args: unknown[]) => void);
    return this;
  }
}

/**
 * CONFIG GET's answer as ioredis gives it: a flat list of names and values. RESP2 answers with that list;
 * RESP3 with a map, which node-redis hands over as a `Map` or an object, and GLIDE as a list of
 * `{ key, value }` entries.
 */
function flatPairs(reply: unknown): unknown {
  if (Array.isArray(reply)) {
    return reply.flatMap((entry: unknown) =>
      typeof entry === 'object' && entry !== null && 'key' in entry && 'value' in entry
        ? [(entry as { key: unknown }).key, (entry as { value: unknown }).value]
        : [entry],
    );
  }
  if (reply instanceof Map) return [...reply.entries()].flat();
  if (typeof reply === 'object' && reply !== null) return Object.entries(reply).flat();
  return reply;
}
