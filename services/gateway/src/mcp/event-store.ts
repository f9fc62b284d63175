/**
 * An in-memory EventStore for resumable Streamable HTTP streams: a client that lost an SSE
 * response reconnects with GET + Last-Event-ID and gets what it missed. One store per session.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface Stored {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
}

/** Keeps the last `limit` events of a session; event ids are `<streamId>.<seq>`. */
export class MemoryEventStore implements EventStore {
  private readonly events: Stored[] = [];
  private seq = 0;

  constructor(private readonly limit = 1_000) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}.${++this.seq}`;
    this.events.push({ id, streamId, message });
    if (this.events.length > this.limit) this.events.splice(0, this.events.length - this.limit);
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const dot = eventId.lastIndexOf('.');
    if (dot <= 0 || !/^\d+$/.test(eventId.slice(dot + 1))) return undefined;
    return eventId.slice(0, dot);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) throw new Error(`not an event id of this session: ${lastEventId}`);
    const after = Number(lastEventId.slice(streamId.length + 1));
    for (const e of this.events) {
      if (e.streamId !== streamId || Number(e.id.slice(streamId.length + 1)) <= after) continue;
      // Priming events carry no message; they only mark a resumption point.
      if (Object.keys(e.message).length === 0) continue;
      await send(e.id, e.message);
    }
    return streamId;
  }

  /** Stored events (for tests and metrics). */
  get size(): number {
    return this.events.length;
  }
}
