/**
 * Rate limits and stream caps that hold across gateway replicas: counters in NATS KV, each
 * change a compare-and-set on the key's revision. A gateway batches what its own requests do to
 * one key into one write, so a burst costs a few round trips, not one per request; writes of
 * other gateways make it read again and retry.
 *
 * - Rate: one key per client and minute window (`r.<client>.<window>`), in a bucket whose entries
 *   expire after two windows.
 * - Streams: one key per client (`s.<client>`) holding each gateway's count and when it last
 *   wrote it; a gateway refreshes its non-zero counts, and counts not refreshed for
 *   a while (StreamShareTiming) are ignored and dropped, so a gateway that died without
 *   releasing frees its share.
 */
import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import type { KV, KvEntry } from '@nats-io/kv';
import type { Bus } from '@askbus/bus';
import { z } from 'zod';

export const RATE_BUCKET = 'askbus_gateway_rates';
export const STREAMS_BUCKET = 'askbus_gateway_streams';
const WINDOW_MS = 60_000;
/** How often a replica rewrites its non-zero stream counts, and when others stop believing them. */
export interface StreamShareTiming {
  refreshMs: number;
  staleMs: number;
}
const TIMING: StreamShareTiming = { refreshMs: 10_000, staleMs: 35_000 };
const MAX_TRIES = 20;

const RateState = z.object({ n: z.number().int().min(0) });
const StreamState = z.record(z.string(), z.object({ n: z.number().int().min(0), at: z.number() }));
type StreamState = z.infer<typeof StreamState>;

/** A client's key as one KV token. */
const tok = (key: string): string => Buffer.from(key, 'utf8').toString('base64url') || '_';

interface Pending<S, R> {
  apply: (state: S) => R;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/** One key's changes, applied in arrival order and written together. */
class CasQueue<S> {
  private readonly queues = new Map<string, Pending<S, unknown>[]>();

  constructor(
    private readonly kv: KV,
    private readonly decode: (entry: KvEntry | null) => S,
  ) {}

  run<R>(key: string, apply: (state: S) => R): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.queues.get(key);
      const op = { apply, resolve, reject } as Pending<S, unknown>;
      if (queue) {
        queue.push(op);
        return;
      }
      this.queues.set(key, [op]);
      void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    for (;;) {
      const ops = this.queues.get(key) ?? [];
      if (ops.length === 0) {
        this.queues.delete(key);
        return;
      }
      this.queues.set(key, []);
      try {
        const results = await this.write(key, ops);
        ops.forEach((op, i) => op.resolve(results[i]));
      } catch (err) {
        for (const op of ops) op.reject(err);
      }
    }
  }

  private async write(key: string, ops: Pending<S, unknown>[]): Promise<unknown[]> {
    for (let tries = 0; ; tries++) {
      const entry = await this.kv.get(key);
      const state = this.decode(entry && entry.operation === 'PUT' ? entry : null);
      const results = ops.map((op) => op.apply(state));
      try {
        const text = JSON.stringify(state);
        if (entry) await this.kv.update(key, text, entry.revision);
        else await this.kv.create(key, text);
        return results;
      } catch (err) {
        // Another gateway wrote first: read again (a few times at most).
        if (tries >= MAX_TRIES) throw err;
      }
    }
  }
}

export interface RateCount {
  count: number;
  /** Time left in the window (s). */
  ttlInSeconds: number;
}

export class SharedLimits {
  /** This gateway's name in the stream counts. */
  readonly gateway = randomUUID();
  private readonly rates: CasQueue<{ n: number }>;
  private readonly streams: CasQueue<StreamState>;
  /** This gateway's open streams per client key (what it refreshes). */
  private readonly mine = new Map<string, number>();
  private readonly refresh: NodeJS.Timeout;
  /** Keys of one scope (tests run several independent gateways on one NATS). */
  private readonly prefix: string;

  private constructor(rateKv: KV, streamKv: KV, scope: string, timing: StreamShareTiming) {
    this.prefix = scope ? `${tok(scope)}.` : '';
    this.rates = new CasQueue(rateKv, (e) => {
      const parsed = e ? RateState.safeParse(e.json()) : undefined;
      return parsed?.success ? parsed.data : { n: 0 };
    });
    this.streams = new CasQueue(streamKv, (e) => {
      const parsed = e ? StreamState.safeParse(e.json()) : undefined;
      const state = parsed?.success ? parsed.data : {};
      const now = Date.now();
      for (const [gw, share] of Object.entries(state)) if (now - share.at > timing.staleMs) delete state[gw];
      return state;
    });
    this.refresh = setInterval(() => {
      for (const [key, n] of this.mine) {
        void this.streams
          .run(`${this.prefix}s.${tok(key)}`, (state) => void (state[this.gateway] = { n, at: Date.now() }))
          .catch(() => undefined);
      }
    }, timing.refreshMs);
    this.refresh.unref();
  }

  /** The shared counters, or undefined without JetStream KV (each gateway then counts alone). */
  static async open(
    bus: Bus,
    scope = '',
    timing: StreamShareTiming = TIMING,
  ): Promise<SharedLimits | undefined> {
    const kvm = new Kvm(bus.nc);
    const bucket = async (name: string, ttl: number): Promise<KV> => {
      try {
        return await kvm.create(name, { history: 1, ...(ttl ? { ttl } : {}) });
      } catch {
        return kvm.open(name);
      }
    };
    try {
      return new SharedLimits(
        await bucket(RATE_BUCKET, 2 * WINDOW_MS),
        await bucket(STREAMS_BUCKET, 0),
        scope,
        timing,
      );
    } catch {
      return undefined;
    }
  }

  /** Counts one request of a key in this minute's window, across every gateway. */
  async consume(key: string): Promise<RateCount> {
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    const count = await this.rates.run(`${this.prefix}r.${tok(key)}.${window}`, (state) => ++state.n);
    return { count, ttlInSeconds: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) };
  }

  /** Takes a place among a key's open streams on every gateway; false when `cap` are open. */
  async enter(key: string, cap: number): Promise<boolean> {
    const entered = await this.streams.run(`${this.prefix}s.${tok(key)}`, (state) => {
      const open = Object.values(state).reduce((sum, s) => sum + s.n, 0);
      if (open >= cap) return false;
      const n = (state[this.gateway]?.n ?? 0) + 1;
      state[this.gateway] = { n, at: Date.now() };
      return true;
    });
    if (entered) this.mine.set(key, (this.mine.get(key) ?? 0) + 1);
    return entered;
  }

  /** Gives a place back. */
  async leave(key: string): Promise<void> {
    const left = (this.mine.get(key) ?? 1) - 1;
    if (left > 0) this.mine.set(key, left);
    else this.mine.delete(key);
    await this.streams.run(`${this.prefix}s.${tok(key)}`, (state) => {
      const n = Math.max(0, (state[this.gateway]?.n ?? 1) - 1);
      if (n > 0) state[this.gateway] = { n, at: Date.now() };
      else delete state[this.gateway];
    });
  }

  /** Open streams of a key on this gateway (tests and metrics). */
  openHere(key: string): number {
    return this.mine.get(key) ?? 0;
  }

  close(): void {
    clearInterval(this.refresh);
  }
}
