import type { Cluster, Redis } from '../../interfaces/ioredis-types.js';
import { setTimeoutAfterReads } from '../../utils/timeout-after-reads.js';

/**
 * A command as far as its deadline needs it: the public fields of an ioredis `Command` (5 and 6). `isSettled`
 * exists from ioredis 6 on; on 5 a rejected command still reads `isResolved: false`, which only delays its
 * removal from the line until its deadline.
 */
export interface DeadlineCommand {
  readonly isResolved?: boolean;
  readonly isSettled?: boolean;
  reject(error: Error): void;
}

/** How late the sweep may run after the oldest deadline: timers of one millisecond's spread are merged. */
const SWEEP_SLACK_MS = 1;

/** How many spent places the line keeps at its front before it copies the rest to new arrays. */
const SPENT_BLOCK = 1024;

/**
 * The commands sent on a client the store owns, oldest first, each with the time its reply is due, and one
 * timer for the oldest. It does what ioredis' `commandTimeout` does (reject a command not answered within
 * the timeout with the same "Command timed out" error, counted from the first time it was sent, through the
 * offline queue and a Cluster's redirections) without a timer armed and cleared per command, which cost
 * about 5 µs of client CPU per acquire and release. Deadlines are appended in the order commands are sent,
 * so the first one in the line is always the earliest.
 */
export class CommandDeadlines {
  private commands: (DeadlineCommand | undefined)[] = [];
  private dueAt: number[] = [];
  private head = 0;
  private sweepArmed = false;

  /** @param timeout the client's `commandTimeout` in ms */
  constructor(readonly timeout: number) {}

  /** Starts the command's deadline; a command sent again (offline queue, redirection) keeps its first one. */
  track(command: DeadlineCommand): void {
    this.dropSettled();
    this.commands.push(command);
    this.dueAt.push(performance.now() + this.timeout);
    if (!this.sweepArmed) this.arm(this.timeout);
  }

  /** How many commands are in the line, answered ones not yet dropped included (for tests). */
  get size(): number {
    return this.commands.length - this.head;
  }

  /** One sweep, judged after the sockets are read so a reply that came during a stall counts. */
  private arm(delay: number): void {
    this.sweepArmed = true;
    // a command awaiting its reply holds its socket, which keeps the process alive: the timer need not
    setTimeoutAfterReads(this.sweep, delay + SWEEP_SLACK_MS, { unref: true });
  }

  private readonly sweep = (): void => {
    this.sweepArmed = false;
    const now = performance.now();
    while (this.head < this.commands.length && this.dueAt[this.head] <= now) {
      const command = this.commands[this.head]!;
      this.commands[this.head++] = undefined;
      // the text and check of ioredis' own timer, so the store describes it the same way
      if (!(command.isSettled ?? command.isResolved)) command.reject(new Error('Command timed out'));
    }
    this.dropSettled();
    if (this.head < this.commands.length) this.arm(this.dueAt[this.head] - now);
  };

  /** Drops answered commands from the front, and the line's spent storage once there is a block of it. */
  private dropSettled(): void {
    const { commands } = this;
    while (this.head < commands.length) {
      const command = commands[this.head]!;
      if (!(command.isSettled ?? command.isResolved)) break;
      commands[this.head++] = undefined;
    }
    // the spent front is cut off in blocks: emptying the arrays after each answer (setting their length) cost
    // about 1 % of a sequential cycle's CPU
    if (this.head >= SPENT_BLOCK && this.head * 2 >= commands.length) {
      this.commands = commands.slice(this.head);
      this.dueAt = this.dueAt.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * Moves the `commandTimeout` of a client the store made and owns from ioredis' timer per command to one
 * {@link CommandDeadlines} for the client (a Cluster's node connections, present and future, share it).
 * `client.options` keep their `commandTimeout`, so error texts, checks and `duplicate()` still see it: ioredis
 * reads it in `sendCommand` only, to arm the command's timer, and each connection's `sendCommand` is wrapped
 * to hide it for that one synchronous call after starting the command's deadline. A connection or command of
 * another shape (no `sendCommand`, no numeric `commandTimeout`, a command without `reject`) is left to ioredis'
 * own timer, and so are options whose `commandTimeout` cannot be written.
 * @param client an ioredis `Redis` or `Cluster` the store made and owns (never a user's client: it keeps its
 *   own behaviour)
 */
export function takeOverCommandTimeout(client: Redis | Cluster): void {
  if ('isCluster' in client && client.isCluster) {
    const cluster = client as Cluster;
    const timeout = cluster.options.redisOptions?.commandTimeout;
    if (!isTimeout(timeout)) return;
    const deadlines = new CommandDeadlines(timeout);
    const takeOver = (node: Redis): void => takeOverConnection(node, deadlines);
    for (const node of cluster.nodes('all')) takeOver(node);
    cluster.on('+node', takeOver);
    return;
  }
  const timeout = (client as Redis).options.commandTimeout;
  if (isTimeout(timeout)) takeOverConnection(client as Redis, new CommandDeadlines(timeout));
}

function isTimeout(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && Number.isFinite(value);
}

function takeOverConnection(connection: Redis, deadlines: CommandDeadlines): void {
  const options = connection.options as { commandTimeout?: number } | undefined;
  if (typeof connection.sendCommand !== 'function' || options?.commandTimeout !== deadlines.timeout) return;
  // the option is hidden by writing it: options that cannot be written keep ioredis' own timer
  if (Object.getOwnPropertyDescriptor(options, 'commandTimeout')?.writable !== true) return;
  const send = connection.sendCommand.bind(connection);
  connection.sendCommand = (...call: Parameters<Redis['sendCommand']>) => {
    const command = call[0] as unknown as DeadlineCommand;
    if (typeof command?.reject !== 'function') return send(...call);
    deadlines.track(command);
    options.commandTimeout = undefined;
    try {
      return send(...call);
    } finally {
      options.commandTimeout = deadlines.timeout;
    }
  };
}
