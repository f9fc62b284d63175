/**
 * The EventStore of one MCP session, shared by the gateway replicas: every event goes into the
 * `askbus_mcp_events` KV bucket (key `<session>.<stream>.<n>`), and its event id is
 * `<streamId>.<revision>`. A client resuming a stream this gateway writes gets it from memory
 * and then live from the SDK transport, as with an in-memory store. A client resuming, on this
 * gateway, a stream another gateway writes (its request runs there) gets what was stored after
 * its Last-Event-ID and then each new event as the other gateway stores it, until the last
 * answer of the stream arrives; `onForeignEnd` then closes the stream here.
 *
 * Without JetStream (kv undefined) it is an in-memory store with ids `<streamId>.m<n>`.
 */
import { randomUUID } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** What one KV entry holds: the message, and whether it is the last answer of its stream. */
const StoredEvent = z.object({ m: z.record(z.string(), z.unknown()), end: z.boolean().optional() });

interface Local {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
}

type Send = (eventId: string, message: JSONRPCMessage) => Promise<void>;

export interface SharedEventStoreOptions {
  maxFollowMs: number;
  /** Events kept in memory for resumptions on this gateway. */
  localLimit?: number;
  warn: (msg: string, fields: Record<string, unknown>) => void;
}

/** A JSON-RPC id as a map key (1 and "1" are different ids). */
export const idKey = (id: unknown): string => `${typeof id}:${String(id)}`;
/** A JSON-RPC request: a method and an id. */
export const isRequest = (m: Record<string, unknown>): boolean => typeof m.method === 'string' && 'id' in m;
/** A JSON-RPC answer (result or error) to a request. */
export const isAnswer = (m: Record<string, unknown>): boolean =>
  m.method === undefined && 'id' in m && ('result' in m || 'error' in m);

export class SharedEventStore implements EventStore {
  private readonly local: Local[] = [];
  /** Streams this gateway writes: their resumptions here are served from memory and the transport. */
  private readonly produced = new Set<string>();
  /** Each request id of a POST → the ids of that POST still without an answer. */
  private readonly open = new Map<string, Set<string>>();
  private readonly follows = new Set<{ stop(): void }>();
  private seq = 0;
  /** While true, nothing is stored (the replayed `initialize` of a restored session). */
  muted = false;
  /** Closes the SSE stream of a followed stream whose last answer has been sent. */
  onForeignEnd: ((streamId: string) => void) | undefined;
  /** Whether the transport still has an open SSE stream for a stream id. */
  isOpen: ((streamId: string) => boolean) | undefined;

  constructor(
    private readonly session: string,
    private readonly kv: KV | undefined,
    private readonly opts: SharedEventStoreOptions,
  ) {}

  /** The requests of one POST: the answer to the last of them ends the stream. */
  expect(requestIds: readonly unknown[]): void {
    if (requestIds.length === 0) return;
    const group = new Set(requestIds.map(idKey));
    for (const k of group) this.open.set(k, group);
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    if (this.muted) return `${streamId}.m${++this.seq}`;
    this.produced.add(streamId);
    const m = message as Record<string, unknown>;
    let end = false;
    if (isAnswer(m)) {
      const k = idKey(m.id);
      const group = this.open.get(k);
      this.open.delete(k);
      group?.delete(k);
      end = !group || group.size === 0;
    }
    let id = `${streamId}.m${++this.seq}`;
    if (this.kv) {
      try {
        const key = `${this.session}.${streamId}.${randomUUID().replaceAll('-', '')}`;
        const revision = await this.kv.put(key, JSON.stringify({ m, ...(end ? { end } : {}) }));
        id = `${streamId}.${revision}`;
      } catch (err) {
        // Still delivered, and resumable here; only other gateways cannot replay it.
        this.opts.warn('MCP event not shared: storing it failed', { streamId, err: String(err) });
      }
    }
    this.local.push({ id, streamId, message });
    const limit = this.opts.localLimit ?? 1_000;
    if (this.local.length > limit) this.local.splice(0, this.local.length - limit);
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const dot = eventId.lastIndexOf('.');
    if (dot <= 0 || !/^m?\d+$/.test(eventId.slice(dot + 1))) return undefined;
    return eventId.slice(0, dot);
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: Send }): Promise<string> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) throw new Error(`not an event id of this session: ${lastEventId}`);
    const at = this.local.findIndex((e) => e.id === lastEventId);
    if (this.produced.has(streamId) && at >= 0) {
      for (const e of this.local.slice(at + 1)) {
        // Priming events carry no message; they only mark a resumption point.
        if (e.streamId === streamId && Object.keys(e.message).length > 0) await send(e.id, e.message);
      }
      return streamId;
    }
    const revision = Number(lastEventId.slice(streamId.length + 1));
    if (!this.kv || !Number.isSafeInteger(revision))
      throw new Error(`event ${lastEventId} is no longer kept`);
    await this.follow(streamId, revision, send);
    return streamId;
  }

  /**
   * Sends the stream's events after `revision`, stored by whichever gateway, then each new one,
   * until its last answer, the client leaving, or maxFollowMs. Returns once the watch is set up:
   * the SDK registers the stream when this store's replay returns, and the events follow.
   */
  private async follow(streamId: string, revision: number, send: Send): Promise<void> {
    const watch = await this.kv!.watch({
      key: `${this.session}.${streamId}.*`,
      include: 'history',
      resumeFromRevision: revision + 1,
    });
    this.follows.add(watch);
    const timer = setTimeout(() => watch.stop(), this.opts.maxFollowMs);
    timer.unref();
    void (async () => {
      let seen = false;
      let ended = false;
      try {
        for await (const e of watch) {
          if (e.operation !== 'PUT') continue;
          const parsed = StoredEvent.safeParse(e.json());
          if (!parsed.success) continue;
          // The client left: stop (the SDK registers the stream before the first event comes).
          const open = this.isOpen?.(streamId) ?? true;
          if (seen && !open) break;
          seen ||= open;
          if (Object.keys(parsed.data.m).length > 0)
            await send(`${streamId}.${e.revision}`, parsed.data.m as JSONRPCMessage);
          if (parsed.data.end) {
            ended = true;
            break;
          }
        }
      } catch (err) {
        this.opts.warn('MCP stream follow failed', { streamId, err: String(err) });
      } finally {
        clearTimeout(timer);
        watch.stop();
        this.follows.delete(watch);
        if (ended || this.isOpen?.(streamId)) this.onForeignEnd?.(streamId);
      }
    })();
  }

  /** Stops following other gateways' streams (the session closed here). */
  close(): void {
    for (const f of this.follows) f.stop();
    this.follows.clear();
  }

  /** Events kept in memory (tests). */
  get size(): number {
    return this.local.length;
  }
}
