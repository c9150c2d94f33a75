import type { Cluster, Redis } from '../../interfaces/ioredis-types.js';

/** The socket of a connection, as far as coalescing its writes needs it. */
interface CorkableSocket {
  cork(): void;
  uncork(): void;
}

/** The replies a connection still awaits (ioredis' own queue of sent commands). */
interface PendingReplies {
  readonly commandQueue: { readonly length: number };
}

/**
 * Makes a connection the store opened send the commands of one tick in few socket writes: a command sent
 * while the connection awaits replies corks the socket, and the socket is uncorked once the tick's callbacks
 * and promise reactions have run, or once it holds {@link MOST_COMMANDS_PER_WRITE} commands (a command on an
 * idle connection is written at once). ioredis writes each command on its own (a write system call each);
 * under concurrent acquisitions those calls were most of the client's CPU, and each is a read on the server
 * too. Unlike
 * `enableAutoPipelining`, nothing waits for an earlier batch's replies and no command is moved to another
 * tick: each command still goes through `sendCommand` (its timeout, the offline queue, MULTI and
 * subscriber checks unchanged), in the order it was sent. A Cluster's node connections are coalesced as
 * the Cluster opens them.
 * @param client an ioredis `Redis` or `Cluster` the store made and owns (never a user's client: it keeps
 *   its own behaviour)
 */
export function coalesceWrites(client: Redis | Cluster): void {
  if ('isCluster' in client && client.isCluster) {
    const cluster = client as Cluster;
    for (const node of cluster.nodes('all')) coalesceConnection(node);
    cluster.on('+node', coalesceConnection);
    return;
  }
  coalesceConnection(client as Redis);
}

/**
 * The most commands one write holds. A whole tick's commands in one write made the client and the server take
 * turns (the server idle while the client builds the tick's batch, the client idle while the server answers
 * it): 64 concurrent loops ran at 0.7x the floor's rate on a machine with cheap system calls. Writes of 16
 * let the server start on the first while the client builds the rest (1.04-1.13x), and still cut the write
 * calls sixteenfold.
 */
export const MOST_COMMANDS_PER_WRITE = 16;

function coalesceConnection(connection: Redis): void {
  const send = connection.sendCommand.bind(connection);
  let corked: CorkableSocket | undefined;
  let held = 0;
  connection.sendCommand = (...call: Parameters<Redis['sendCommand']>) => {
    // a command of a pipeline or MULTI (second argument) is written with the rest of its batch already
    const socket = call[1] === undefined ? (connection.stream as CorkableSocket | undefined) : undefined;
    // on an idle connection the command goes out at once: a lone command (an uncontended acquire) would
    // otherwise wait for the rest of its tick before being written
    const busy = (connection as unknown as PendingReplies).commandQueue.length > 0;
    if (socket !== undefined && socket !== corked && busy) {
      corked = socket;
      held = 0;
      socket.cork();
      process.nextTick(() => {
        if (corked === socket) corked = undefined;
        socket.uncork();
      });
    }
    const sent = send(...call);
    // a full write goes out now; the tick's next command starts another
    if (corked !== undefined && socket === corked && ++held >= MOST_COMMANDS_PER_WRITE) {
      corked = undefined;
      socket.uncork();
    }
    return sent;
  };
}
