import type { NatsConnection } from '@nats-io/nats-core';

/**
 * Whether this process's NATS connection is up, and when it last came back. The bus needs it
 * because of two facts of a NATS restart:
 *
 * - nats.js discards its outbound buffer at every (re)connect attempt (ProtocolHandler.prepare →
 *   resetOutbound), so a request published while the connection is down is dropped without a
 *   trace: the server never sees it, sends no no_responders, and the caller would wait out its
 *   whole time limit.
 * - Right after a reconnect the services behind a subject may not have re-subscribed yet (each
 *   connection reconnects on its own timer), so the server answers no_responders for a request
 *   that would find a responder a moment later.
 * - While it is down, a stream that already answered cannot go on: what its server publishes
 *   meanwhile is lost, so its caller is told at once (`onDisconnect`), not after its inactivity limit.
 */
export class LinkState {
  private reconnectedAt = -Infinity;
  private connected = true;
  private readonly onBack = new Set<() => void>();
  private readonly onGone = new Set<() => void>();

  constructor(nc: NatsConnection) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          this.connected = false;
          for (const listener of [...this.onGone]) listener();
        }
        if (s.type !== 'reconnect') continue;
        this.connected = true;
        this.reconnectedAt = Date.now();
        for (const listener of [...this.onBack]) listener();
      }
    })().catch(() => undefined);
  }

  /** False from a disconnect until the connection is back. */
  get up(): boolean {
    return this.connected;
  }

  /** Calls `listener` at every disconnect until the returned function is called. */
  onDisconnect(listener: () => void): () => void {
    this.onGone.add(listener);
    return () => this.onGone.delete(listener);
  }

  /** Milliseconds since the connection last came back (Infinity if it never dropped). */
  sinceReconnectMs(): number {
    return Date.now() - this.reconnectedAt;
  }

  /** Calls `listener` at every reconnect until the returned function is called. */
  onReconnect(listener: () => void): () => void {
    this.onBack.add(listener);
    return () => this.onBack.delete(listener);
  }
}
