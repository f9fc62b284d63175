/**
 * MCP sessions that any gateway replica can serve. A session's record (its owner and the
 * client's `initialize` parameters) lives in the `askbus_mcp_sessions` KV bucket, so a gateway
 * that has never seen a session restores it on its first request; its events live in
 * `askbus_mcp_events` (shared-event-store.ts), so a stream resumes on any replica; what must
 * reach the gateway holding some state (a client's reply to an elicitation, a legacy-SSE POST,
 * a DELETE) travels on `mcp.v1.session.<sessionId>`. Without JetStream every session stays on
 * the gateway that made it, as before.
 */
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import type { Bus } from '@askbus/bus';
import { McpSessionRecord, eventContracts, keyOfSubjectToken } from '@askbus/contracts';
import type { McpSessionEvent } from '@askbus/contracts';
import { SharedEventStore } from './shared-event-store';

export const SESSIONS_BUCKET = 'askbus_mcp_sessions';
export const EVENTS_BUCKET = 'askbus_mcp_events';
/** Events are kept this long (a client resumes within minutes or not at all). */
const EVENTS_TTL_MS = 60 * 60_000;
const EVENTS_MAX_BYTES = 256 * 1024 * 1024;

export interface SharedSessionsOptions {
  /** A session nobody used this long is forgotten by every gateway (ms). */
  idleMs: number;
  /** How long a stream resumed on another gateway follows the one that runs its request (ms). */
  maxFollowMs?: number;
  warn: (msg: string, fields: Record<string, unknown>) => void;
}

type EventHandler = (sessionId: string, event: McpSessionEvent) => void;

/** A session id as one KV key token (the SDK's are UUIDs; anything else is encoded). */
const keyOf = (sessionId: string): string =>
  /^[A-Za-z0-9_-]{1,128}$/.test(sessionId) ? sessionId : `_${Buffer.from(sessionId).toString('hex')}`;

export class SharedSessions {
  private readonly touched = new Map<string, number>();
  private readonly handlers = new Set<EventHandler>();
  private readonly sub: { unsubscribe(): void } | undefined;

  private constructor(
    private readonly bus: Bus,
    private readonly records: KV | undefined,
    private readonly events: KV | undefined,
    private readonly opts: SharedSessionsOptions,
  ) {
    if (records) {
      this.sub = bus.subscribe(eventContracts.mcpSession, undefined, (event, meta) => {
        const token = meta.subject.slice(eventContracts.mcpSession.subject.length + 1);
        for (const h of this.handlers) h(keyOfSubjectToken(token), event);
      });
    }
  }

  /** Opens the buckets (creating them when missing); without JetStream, sessions stay local. */
  static async open(bus: Bus, opts: SharedSessionsOptions): Promise<SharedSessions> {
    const kvm = new Kvm(bus.nc);
    const bucket = async (name: string, config: Record<string, number>): Promise<KV> => {
      try {
        return await kvm.create(name, { history: 1, ...config });
      } catch {
        // A bucket made with other settings (another gateway's idle time) is still the bucket.
        return kvm.open(name);
      }
    };
    try {
      const [records, events] = await Promise.all([
        bucket(SESSIONS_BUCKET, { ttl: opts.idleMs }),
        bucket(EVENTS_BUCKET, { ttl: EVENTS_TTL_MS, max_bytes: EVENTS_MAX_BYTES }),
      ]);
      return new SharedSessions(bus, records, events, opts);
    } catch (err) {
      opts.warn('MCP sessions stay on this gateway: JetStream KV is not available', { err: String(err) });
      return new SharedSessions(bus, undefined, undefined, opts);
    }
  }

  /** Whether other gateways can serve this gateway's sessions. */
  get shared(): boolean {
    return this.records !== undefined;
  }

  /** The record of a session, from whichever gateway made it. */
  async get(sessionId: string): Promise<McpSessionRecord | undefined> {
    if (!this.records) return undefined;
    try {
      const entry = await this.records.get(keyOf(sessionId));
      if (!entry || entry.operation !== 'PUT') return undefined;
      const parsed = McpSessionRecord.safeParse(entry.json());
      return parsed.success ? parsed.data : undefined;
    } catch (err) {
      this.opts.warn('MCP session lookup failed', { sessionId, err: String(err) });
      return undefined;
    }
  }

  /** Records a new session, before its client learns its id. */
  async put(sessionId: string, record: McpSessionRecord): Promise<void> {
    if (!this.records) return;
    try {
      await this.records.put(keyOf(sessionId), JSON.stringify(record));
      this.touched.set(sessionId, Date.now());
    } catch (err) {
      this.opts.warn('MCP session not shared: storing it failed', { sessionId, err: String(err) });
    }
  }

  /** Keeps a used session from expiring (a write at most every quarter of the idle time). */
  touch(sessionId: string, record: McpSessionRecord): void {
    if (!this.records) return;
    const last = this.touched.get(sessionId) ?? 0;
    if (Date.now() - last < this.opts.idleMs / 4) return;
    this.touched.set(sessionId, Date.now());
    this.records.put(keyOf(sessionId), JSON.stringify(record)).catch((err: unknown) => {
      this.opts.warn('MCP session refresh failed', { sessionId, err: String(err) });
    });
  }

  /** Ends a session everywhere: its record goes, and every gateway drops its copy. */
  async remove(sessionId: string): Promise<void> {
    this.touched.delete(sessionId);
    if (!this.records) return;
    try {
      await this.records.delete(keyOf(sessionId));
    } catch (err) {
      this.opts.warn('MCP session removal failed', { sessionId, err: String(err) });
    }
    this.publish(sessionId, { type: 'closed' });
  }

  /** Forgets this gateway's bookkeeping of a session it closed (its record stays for others). */
  forget(sessionId: string): void {
    this.touched.delete(sessionId);
  }

  publish(sessionId: string, event: McpSessionEvent): void {
    if (!this.records || this.bus.nc.isClosed()) return;
    this.bus.publish(eventContracts.mcpSession, sessionId, event);
  }

  /** Hears every session event (each gateway keeps the sessions it holds). */
  onEvent(handler: EventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** The event store of one session: events on every gateway's reach. */
  eventStore(sessionId: string): SharedEventStore {
    return new SharedEventStore(keyOf(sessionId), this.events, {
      maxFollowMs: this.opts.maxFollowMs ?? 10 * 60_000,
      warn: this.opts.warn,
    });
  }

  close(): void {
    if (!this.bus.nc.isClosed()) this.sub?.unsubscribe();
    this.handlers.clear();
  }
}
