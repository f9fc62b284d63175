import type { Socket } from 'node:net';
import type { NatsConnection } from '@nats-io/nats-core';

/** The socket nats.js writes to now (a new one after each reconnect); undefined if it has none. */
function socketOf(nc: NatsConnection): Socket | undefined {
  const socket = (nc as unknown as { protocol?: { transport?: { socket?: unknown } } }).protocol?.transport
    ?.socket;
  return socket && typeof (socket as Socket).cork === 'function' ? (socket as Socket) : undefined;
}

const corked = new WeakSet<Socket>();

/**
 * Holds this connection's socket writes until the end of the current turn of the event loop, so
 * what a service publishes across several awaits (a stream's first chunk and the request it makes
 * next, a reply and a cancel) leaves in one system call. nats.js alone writes once per microtask
 * run: on loopback each write also wakes nats-server, which costs the writer about as much as
 * the JSON it carries. Publishing stays synchronous, so its errors (a closed connection, a payload
 * over max_payload) still reach the caller; only the socket write moves to the end of the turn.
 */
export function batchWritesThisTurn(nc: NatsConnection): void {
  const socket = socketOf(nc);
  if (!socket || corked.has(socket) || socket.destroyed) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}
