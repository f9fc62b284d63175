import { setTimeout as delay } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/nats-core';
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/nats-core';
import {
  ANONYMOUS_CALLER,
  CANCEL_PREFIX,
  SubjectToken,
  cancelSubject,
  eventSubject,
} from '@askbus/contracts';
import type { EventContract, StreamContract, UnaryContract } from '@askbus/contracts';
import { z } from 'zod';
import { decodeWith, encodeJson } from './codec';
import { BusError } from './errors';
import { Discovery } from './discovery';
import { H } from './headers';
import { LinkState } from './link';
import { PermissionViolations } from './permissions-violations';
import { RefusalLog } from './refusal-log';
import { checkReply } from './reply-inbox';
import { ReplyMux, type ReplyInbox } from './reply-mux';
import { RunningWork, parseCancelSubject } from './running-work';
import { startCallSpan, startHandlerSpan, withContext } from './tracing';

/** How a call is made: which query it belongs to, how long it may take, how to stop it. */
export interface CallOptions {
  queryId?: string;
  /**
   * The NATS user that started the query (it may cancel this call too); `onward()` passes it on.
   * Default: this bus's own user.
   */
  origin?: string;
  /** Relative limit for this call; the smaller of it and `deadline` wins. */
  timeoutMs?: number;
  /** Absolute deadline (epoch ms), usually inherited from the caller's caller. */
  deadline?: number;
  signal?: AbortSignal;
  traceparent?: string;
  /** A stream with no chunk and no heartbeat for this long fails with `timeout`. */
  inactivityMs?: number;
}

/** What a handler knows about the call it serves. */
export interface HandlerContext {
  queryId: string;
  callId: string;
  /**
   * Aborted by `ask.v1.cancel.<caller>.<queryId>[.<callId>]` from the call's caller or the query's
   * origin (any caller on a bus without NATS users), by the deadline, or by drain.
   */
  signal: AbortSignal;
  deadline: number | undefined;
  traceparent: string;
  /** Options for calls this handler makes onward: same query, deadline, signal and trace. */
  onward(extra?: Omit<CallOptions, 'queryId'>): CallOptions;
}

export interface BusOptions {
  /** The service name; it is the default queue group. */
  service: string;
  /** Heartbeat interval of streams this bus serves. */
  heartbeatMs?: number;
  /** Default inactivity limit of streams this bus consumes. */
  inactivityMs?: number;
  /** Default time limit of calls without one. */
  defaultTimeoutMs?: number;
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Version shown by $SRV discovery. */
  version?: string;
  /**
   * The NATS user this bus connects as (connectBus sets it). With a user, the bus answers only
   * `_INBOX_<user>.…` reply subjects, names this user in the cancels it sends, and lets only a
   * call's caller and the query's origin cancel a call it serves. Without one it also answers
   * plain `_INBOX.…` and honours every cancel (there are no identities to check).
   */
  user?: string;
  /**
   * Prefix of this bus's reply inboxes (default `_INBOX`). connectBus sets `_INBOX_<user>` for a
   * NATS user, so its permissions can let it read its own replies and nobody else's.
   */
  inboxPrefix?: string;
  /**
   * How long after this connection comes back a no_responders is taken for services that have
   * not re-subscribed yet, and the call is sent again with a short backoff (default 10 s).
   */
  reconnectGraceMs?: number;
}

export interface ServeOptions {
  /** Queue group; defaults to the service name. */
  queue?: string;
  /** This handler's own limit; the caller's deadline still applies when smaller. */
  timeoutMs?: number;
}

/** Where an event came from: its subject and the publisher's trace context. */
export interface EventMeta {
  subject: string;
  traceparent: string | undefined;
}

/** Told of every call made and every request handled, for metrics. */
export interface BusObserver {
  called(subject: string, outcome: string, seconds: number): void;
  handled(subject: string, outcome: string, seconds: number): void;
}

/** Counters a test or a metrics endpoint can read. */
export interface BusStats {
  served: number;
  failed: number;
  cancelled: number;
  inFlight: number;
  /** Requests not answered (nor run) because their reply subject was not an inbox (reply-inbox.ts). */
  refusedReplies: number;
  /** Calls a cancel did not stop because its sender neither made the call nor started the query. */
  refusedCancels: number;
}

type UnaryHandler<C extends UnaryContract<z.ZodType, z.ZodType>> = (
  req: z.infer<C['request']>,
  ctx: HandlerContext,
) => Promise<z.input<C['reply']>>;
type StreamHandler<C extends StreamContract<z.ZodType, z.ZodType>> = (
  req: z.infer<C['request']>,
  ctx: HandlerContext,
) => AsyncIterable<z.input<C['chunk']>>;

/** Typed request, stream and serve over one NATS connection, as libs/contracts declares them. */
export class Bus {
  readonly stats: BusStats = {
    served: 0,
    failed: 0,
    cancelled: 0,
    inFlight: 0,
    refusedReplies: 0,
    refusedCancels: 0,
  };
  private readonly work: RunningWork;
  /** Who this bus is in the cancels it sends and the origin of the queries it starts. */
  private readonly caller: string;
  private readonly refusals: RefusalLog;
  private readonly serving: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly cancelSub: Subscription;
  private readonly heartbeatMs: number;
  private readonly inactivityMs: number;
  private readonly defaultTimeoutMs: number;
  private readonly reconnectGraceMs: number;
  private readonly link: LinkState;
  /** NATS refusing a publish fails the calls to that subject at once, not at their deadline. */
  private readonly violations: PermissionViolations;
  private closing = false;
  private observer: BusObserver | undefined;
  /** The replies to this bus's calls, on one subscription. */
  private readonly replies: ReplyMux;
  /** Answers $SRV.PING / INFO / STATS for this process. */
  readonly discovery: Discovery;

  constructor(
    readonly nc: NatsConnection,
    private readonly opts: BusOptions,
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? 2_000;
    this.inactivityMs = opts.inactivityMs ?? 15_000;
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? 60_000;
    this.reconnectGraceMs = opts.reconnectGraceMs ?? 10_000;
    this.link = new LinkState(nc);
    this.replies = new ReplyMux(nc, opts.inboxPrefix);
    const log = opts.log ?? ((level, msg, fields) => console[level](msg, fields ?? ''));
    this.violations = new PermissionViolations(nc, opts.service, log);
    this.refusals = new RefusalLog(log);
    this.caller = opts.user ?? ANONYMOUS_CALLER;
    this.work = new RunningWork(opts.user !== undefined);
    this.discovery = new Discovery(nc, opts.service, opts.version ?? '0.1.0', (msg) => this.mayAnswer(msg));
    // Every process hears every cancel (no queue group) and aborts what it runs for that query.
    this.cancelSub = nc.subscribe(`${CANCEL_PREFIX}.>`, {
      callback: (_err, msg) => this.onCancel(msg.subject),
    });
  }

  /** Calls of this bus waiting for replies now (a leak shows here). */
  get pendingReplies(): number {
    return this.replies.pending;
  }

  get service(): string {
    return this.opts.service;
  }

  /** True once drain() began: the service takes no new work (readiness goes false). */
  get draining(): boolean {
    return this.closing;
  }

  /** Whether the NATS connection is up now (false while nats.js is reconnecting). */
  get connected(): boolean {
    return this.link.up && !this.nc.isClosed();
  }

  observe(observer: BusObserver): void {
    this.observer = observer;
  }

  /**
   * Cancels everything in flight for a query in every service, or one call of it: what this bus's
   * user asked for, directly or as the query's origin.
   */
  cancel(queryId: string, callId?: string): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(cancelSubject(this.caller, queryId, callId));
  }

  // ---------------------------------------------------------------- events

  /** Publishes one event on `<contract.subject>.<key>`, validated, with the trace context. */
  publish<C extends EventContract<z.ZodType>>(
    contract: C,
    key: string,
    event: z.input<C['event']>,
    opts: { traceparent?: string } = {},
  ): void {
    const parsed = contract.event.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BusError(
        'bad_request',
        `event is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      );
    }
    if (this.nc.isClosed()) return;
    const subject = eventSubject(contract, key);
    const h = natsHeaders();
    const span = startCallSpan(subject, key, opts.traceparent);
    span.inject(h);
    this.nc.publish(subject, encodeJson(parsed.data), { headers: h });
    span.end();
  }

  /**
   * Hears the events of one key (or of every key when `key` is undefined), no queue group.
   * Events that do not match the contract are logged and dropped.
   */
  subscribe<C extends EventContract<z.ZodType>>(
    contract: C,
    key: string | undefined,
    handler: (event: z.infer<C['event']>, meta: EventMeta) => void,
  ): Subscription {
    const subject = key === undefined ? `${contract.subject}.*` : eventSubject(contract, key);
    return this.nc.subscribe(subject, {
      callback: (_err, msg) => {
        let event: z.infer<C['event']>;
        try {
          event = decodeWith(contract.event, msg.data, 'bad_request', `event on ${msg.subject}`) as z.infer<
            C['event']
          >;
        } catch (err) {
          this.opts.log?.('warn', 'dropped an invalid event', { subject: msg.subject, err: String(err) });
          return;
        }
        try {
          handler(event, { subject: msg.subject, traceparent: msg.headers?.get(H.traceparent) || undefined });
        } catch (err) {
          this.opts.log?.('error', 'event handler crashed', { subject: msg.subject, err: String(err) });
        }
      },
    });
  }

  // ---------------------------------------------------------------- client side
  //
  // Sending again. A call is sent once more only before anything of its answer has arrived, so
  // the caller never sees a chunk twice, and only when the first sending cannot have been served:
  // - the connection dropped between the publish and the first message: nats.js discards what it
  //   had not written yet (see LinkState), so the request or its first answer may be gone. The
  //   earlier attempt is cancelled by its call id (it may have been delivered) and the call goes
  //   out again, on a new reply inbox, as soon as the connection is back;
  // - no_responders within reconnectGraceMs of this connection coming back: the server delivered
  //   it to nobody, and the services are probably still re-subscribing. It goes out again after
  //   50, 100, 200 … 1,000 ms while the grace period and the call's deadline last.
  // Every contract askbus declares is safe to send again under these rules: the unary subjects
  // are reads (search, sites) or idempotent writes keyed by url / site (upsert; a delete done
  // twice leaves the same index, though the second reply counts 0), and a stream (ask, score,
  // tools) that has sent nothing has shown the caller nothing, while its earlier attempt is
  // cancelled. Otherwise no_responders fails at once, as before: a subject nobody serves is
  // reported, not waited on. A new contract that is not idempotent must not rely on this.

  async request<C extends UnaryContract<z.ZodType, z.ZodType>>(
    contract: C,
    req: z.input<C['request']>,
    opts: CallOptions = {},
  ): Promise<z.infer<C['reply']>> {
    const watch = this.violations.watch(contract.subject, opts.signal);
    try {
      return await this.sendRequest(contract, req, { ...opts, signal: watch.signal });
    } catch (err) {
      throw watch.refused() ?? err;
    } finally {
      watch.dispose();
    }
  }

  /** A stream of chunks; breaking out of the loop cancels the call at the server. */
  async *stream<C extends StreamContract<z.ZodType, z.ZodType>>(
    contract: C,
    req: z.input<C['request']>,
    opts: CallOptions = {},
  ): AsyncGenerator<z.infer<C['chunk']>, void, undefined> {
    const watch = this.violations.watch(contract.subject, opts.signal);
    try {
      yield* this.sendStream(contract, req, { ...opts, signal: watch.signal });
    } catch (err) {
      throw watch.refused() ?? err;
    } finally {
      watch.dispose();
    }
  }

  private async sendRequest<C extends UnaryContract<z.ZodType, z.ZodType>>(
    contract: C,
    req: z.input<C['request']>,
    opts: CallOptions,
  ): Promise<z.infer<C['reply']>> {
    const call = this.prepareCall(contract.subject, contract.request, req, opts);
    let failure: BusError | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        const inbox = this.replies.inbox();
        let msg: Msg | typeof LINK_LOST;
        try {
          this.nc.publish(contract.subject, call.payload, { reply: inbox.subject, headers: call.headers });
          msg = await this.nextMessage(inbox.messages, call, call.remainingMs(), undefined, true);
        } finally {
          inbox.close();
        }
        if (msg === LINK_LOST) {
          this.resendAfterLinkLoss(call);
          continue;
        }
        if (isNoResponders(msg)) {
          if (await this.mayResendNoResponders(call, attempt)) continue;
          throw new BusError('no_responders', `no service answers ${contract.subject}`);
        }
        const code = msg.headers?.get(H.error);
        if (code) throw BusError.fromBody(msg.data);
        return decodeWith(contract.reply, msg.data, 'internal', `reply of ${contract.subject}`) as z.infer<
          C['reply']
        >;
      }
    } catch (err) {
      failure = BusError.from(err);
      if (['cancelled', 'timeout', 'deadline_exceeded'].includes(failure.code)) {
        this.cancel(call.queryId, call.callId);
      }
      throw failure;
    } finally {
      call.dispose(failure);
    }
  }

  private async *sendStream<C extends StreamContract<z.ZodType, z.ZodType>>(
    contract: C,
    req: z.input<C['request']>,
    opts: CallOptions,
  ): AsyncGenerator<z.infer<C['chunk']>, void, undefined> {
    const call = this.prepareCall(contract.subject, contract.request, req, opts);
    const inactivity = opts.inactivityMs ?? this.inactivityMs;
    let inbox: ReplyInbox | undefined;
    let messages: AsyncIterator<Msg> | undefined;
    const send = (): AsyncIterator<Msg> => {
      inbox?.close();
      inbox = this.replies.inbox();
      this.nc.publish(contract.subject, call.payload, { reply: inbox.subject, headers: call.headers });
      return inbox.messages;
    };
    let expected = 0;
    /** Something (a chunk or a heartbeat) arrived: from now on the call is never sent again. */
    let answered = false;
    let attempt = 0;
    let finished = false;
    let failure: BusError | undefined;
    try {
      messages = send();
      for (;;) {
        // Whichever limit is nearer decides the error, fixed now: timers may fire a millisecond
        // early by Date.now(), so asking the clock again when one fires could pick the wrong one.
        const remaining = call.remainingMs();
        const byDeadline = remaining <= inactivity;
        const msg = await this.nextMessage(
          messages,
          call,
          Math.min(inactivity, remaining),
          () =>
            byDeadline
              ? new BusError('deadline_exceeded', `${contract.subject} passed its deadline`)
              : new BusError('timeout', `${contract.subject} sent nothing for ${inactivity} ms`),
          !answered,
        );
        if (msg === LINK_LOST) {
          this.resendAfterLinkLoss(call);
          messages = send();
          continue;
        }
        if (isNoResponders(msg)) {
          if (!answered && (await this.mayResendNoResponders(call, attempt++))) {
            messages = send();
            continue;
          }
          finished = true;
          throw new BusError('no_responders', `no service answers ${contract.subject}`);
        }
        answered = true;
        const hdr = msg.headers;
        if (hdr?.get(H.heartbeat)) continue;
        const seq = Number(hdr?.get(H.seq));
        if (seq !== expected) {
          throw new BusError('stream_gap', `${contract.subject}: chunk ${seq} arrived, ${expected} expected`);
        }
        expected++;
        const end = hdr?.get(H.end);
        if (end) {
          finished = true;
          if (end === 'done') return;
          if (end === 'last') {
            yield* chunksOf(contract, msg) as Iterable<z.infer<C['chunk']>>;
            return;
          }
          if (end === 'cancelled') throw new BusError('cancelled', `${contract.subject} was cancelled`);
          throw BusError.fromBody(msg.data);
        }
        yield* chunksOf(contract, msg) as Iterable<z.infer<C['chunk']>>;
      }
    } catch (err) {
      failure = BusError.from(err);
      throw failure;
    } finally {
      inbox?.close();
      call.dispose(failure);
      // Stopped before the end marker (consumer broke off, timeout, abort): stop the server too.
      if (!finished) this.cancel(call.queryId, call.callId);
    }
  }

  /** The connection dropped before any answer: the attempt may have reached a service; stop it. */
  private resendAfterLinkLoss(call: PreparedCall): void {
    this.cancel(call.queryId, call.callId);
    call.renew();
    this.opts.log?.('warn', 'the NATS connection dropped before an answer came; sending the call again', {
      subject: call.subject,
      queryId: call.queryId,
    });
  }

  /**
   * After a no_responders: true (after a backoff) when the call should go out again because this
   * connection came back moments ago and the services may still be re-subscribing.
   */
  private async mayResendNoResponders(call: PreparedCall, attempt: number): Promise<boolean> {
    const backoffMs = Math.min(1_000, 50 * 2 ** attempt);
    if (this.link.sinceReconnectMs() + backoffMs > this.reconnectGraceMs) return false;
    if (call.remainingMs() <= backoffMs) return false;
    await abortableSleep(backoffMs, call.signal);
    call.renew();
    return true;
  }

  private prepareCall(subject: string, schema: z.ZodType, req: unknown, opts: CallOptions): PreparedCall {
    const parsed = schema.safeParse(req);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BusError(
        'bad_request',
        `request is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      );
    }
    if (opts.signal?.aborted) throw new BusError('cancelled', 'cancelled before it was sent');
    const queryId = opts.queryId ?? randomUUID();
    const newCallId = (): string => randomUUID().replaceAll('-', '');
    const deadline = Math.min(
      opts.deadline ?? Infinity,
      Date.now() + (opts.timeoutMs ?? this.defaultTimeoutMs),
    );
    const h = natsHeaders();
    h.set(H.queryId, queryId);
    h.set(H.callId, newCallId());
    h.set(H.deadline, String(deadline));
    h.set(H.origin, opts.origin ?? this.caller);
    const span = startCallSpan(subject, queryId, opts.traceparent);
    span.inject(h);
    const started = performance.now();
    return {
      subject,
      queryId,
      get callId() {
        return h.get(H.callId);
      },
      renew: () => h.set(H.callId, newCallId()),
      headers: h,
      payload: encodeJson(parsed.data),
      signal: opts.signal,
      remainingMs: () => deadline - Date.now(),
      dispose: (failure?: BusError) => {
        span.end(failure);
        this.observer?.called(subject, failure?.code ?? 'ok', (performance.now() - started) / 1000);
      },
    };
  }

  /**
   * The next message of a subscription, or a BusError on abort or when `waitMs` runs out; with
   * `untilReconnect`, LINK_LOST when the connection comes back first (what was sent may be lost).
   */
  private async nextMessage(
    iterator: AsyncIterator<Msg>,
    call: { signal: AbortSignal | undefined; remainingMs: () => number },
    waitMs: number,
    onTimeout: () => BusError = () => new BusError('deadline_exceeded', 'no reply before the deadline'),
    untilReconnect = false,
  ): Promise<Msg | typeof LINK_LOST> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let offReconnect: (() => void) | undefined;
    let offDisconnect: (() => void) | undefined;
    try {
      const result = await Promise.race([
        iterator.next(),
        new Promise<typeof LINK_LOST>((resolve, reject) => {
          timer = setTimeout(() => reject(onTimeout()), Math.max(0, waitMs));
          if (untilReconnect) offReconnect = this.link.onReconnect(() => resolve(LINK_LOST));
          else {
            // A stream that has answered cannot be sent again: losing the link ends it now.
            const lost = (): void =>
              reject(new BusError('unavailable', 'the NATS connection was lost mid-answer'));
            if (!this.link.up) lost();
            else offDisconnect = this.link.onDisconnect(lost);
          }
          if (call.signal) {
            onAbort = () => reject(new BusError('cancelled', 'cancelled by the caller'));
            if (call.signal.aborted) onAbort();
            else call.signal.addEventListener('abort', onAbort, { once: true });
          }
        }),
      ]);
      if (result === LINK_LOST) return LINK_LOST;
      if (result.done) throw new BusError('unavailable', 'the connection closed');
      return result.value;
    } finally {
      clearTimeout(timer);
      offReconnect?.();
      offDisconnect?.();
      if (onAbort) call.signal?.removeEventListener('abort', onAbort);
    }
  }

  // ---------------------------------------------------------------- server side

  serve<C extends UnaryContract<z.ZodType, z.ZodType>>(
    contract: C,
    handler: UnaryHandler<C>,
    opts: ServeOptions = {},
  ): Subscription {
    return this.serveOn(contract.subject, opts, async (msg, reply, caller) => {
      const answer = (data: Uint8Array, h?: MsgHdrs) => this.nc.publish(reply, data, { headers: h });
      await this.runHandler(
        msg,
        caller,
        opts,
        contract.request,
        async (req, ctx) => {
          const out = await handler(req as z.infer<C['request']>, ctx);
          // checked where it is received only (a hot-path contract): the handler's types stand for it here
          if (contract.checked === 'on-receipt') return answer(encodeJson(out));
          const parsed = contract.reply.safeParse(out);
          if (!parsed.success) {
            throw new BusError(
              'internal',
              `${contract.subject} produced an invalid reply: ${parsed.error.issues[0]?.message}`,
            );
          }
          answer(encodeJson(parsed.data));
        },
        (err) => {
          const h = natsHeaders();
          h.set(H.error, err.code);
          answer(encodeJson(err.toBody()), h);
        },
      );
    });
  }

  serveStream<C extends StreamContract<z.ZodType, z.ZodType>>(
    contract: C,
    handler: StreamHandler<C>,
    opts: ServeOptions = {},
  ): Subscription {
    return this.serveOn(contract.subject, opts, async (msg, reply, caller) => {
      let seq = 0;
      let lastSent = Date.now();
      const send = (data: Uint8Array, extra?: (h: MsgHdrs) => void) => {
        if (this.nc.isClosed()) return;
        const h = natsHeaders();
        h.set(H.seq, String(seq++));
        extra?.(h);
        this.nc.publish(reply, data, { headers: h });
        lastSent = Date.now();
      };
      // Chunks encoded and not yet sent: one, or a chunk that waits to join the next (joinsNext).
      const pending: Uint8Array[] = [];
      const flush = (last: boolean) => {
        if (pending.length === 0) return;
        const n = pending.length;
        send(n === 1 ? pending[0]! : joinChunks(pending), (h) => {
          if (n > 1) h.set(H.chunks, String(n));
          if (last) h.set(H.end, 'last');
        });
        pending.length = 0;
      };
      const heartbeat = setInterval(
        () => {
          if (this.nc.isClosed() || Date.now() - lastSent < this.heartbeatMs) return;
          const h = natsHeaders();
          h.set(H.heartbeat, '1');
          this.nc.publish(reply, new Uint8Array(), { headers: h });
          lastSent = Date.now();
        },
        Math.max(50, Math.floor(this.heartbeatMs / 2)),
      );
      try {
        await this.runHandler(
          msg,
          caller,
          opts,
          contract.request,
          async (req, ctx) => {
            const chunks = handler(req as z.infer<C['request']>, ctx)[Symbol.asyncIterator]();
            let step = await chunks.next();
            try {
              while (!step.done && !ctx.signal.aborted) {
                pending.push(this.encodeChunk(contract, step.value));
                // A chunk goes out once the handler's next step is known or this turn of the event
                // loop ends, whichever is first; a chunk its contract lets join the next waits up to
                // JOIN_WAIT_MS for it. When that step is the end, the message itself says so
                // (`last`): one message instead of a chunk and an empty end marker, a message
                // less for the caller, nats-server and this process to handle.
                const joins = contract.joinsNext?.(step.value) ?? false;
                const following = chunks.next();
                const wait = joins ? waitUpTo(JOIN_WAIT_MS) : { done: nextTurn(), clear: () => {} };
                const ready = await Promise.race([following, wait.done]);
                wait.clear();
                if (ready !== NOT_YET && ready.done && !ctx.signal.aborted) {
                  flush(true);
                  step = ready;
                  return;
                }
                if (ready === NOT_YET || !joins) flush(false);
                step = ready === NOT_YET ? await following : ready;
              }
            } finally {
              if (!step.done) await chunks.return?.(undefined);
            }
            if (ctx.signal.aborted) throw new BusError('cancelled', 'cancelled');
            flush(false);
            send(new Uint8Array(), (h) => h.set(H.end, 'done'));
          },
          (err) => {
            if (err.code === 'cancelled') send(new Uint8Array(), (h) => h.set(H.end, 'cancelled'));
            else {
              // what the handler produced before it failed still reaches the caller
              flush(false);
              send(encodeJson(err.toBody()), (h) => h.set(H.end, 'error'));
            }
          },
        );
      } finally {
        clearInterval(heartbeat);
      }
    });
  }

  /** A stream chunk as bytes, checked against the contract unless it is checked on receipt. */
  private encodeChunk<C extends StreamContract<z.ZodType, z.ZodType>>(
    contract: C,
    chunk: unknown,
  ): Uint8Array {
    if (contract.checked === 'on-receipt') return encodeJson(chunk);
    const parsed = contract.chunk.safeParse(chunk);
    if (!parsed.success) {
      throw new BusError(
        'internal',
        `${contract.subject} produced an invalid chunk: ${parsed.error.issues[0]?.message}`,
      );
    }
    return encodeJson(parsed.data);
  }

  private serveOn(
    subject: string,
    opts: ServeOptions,
    onMsg: (msg: Msg, reply: string, caller: string) => Promise<void>,
  ): Subscription {
    const queue = opts.queue ?? this.opts.service;
    this.discovery.addEndpoint(subject, queue);
    const sub = this.nc.subscribe(subject, {
      queue,
      callback: (_err, msg) => {
        if (this.closing) return;
        // Refused before anything runs: a request that cannot be answered is not served either.
        const verdict = this.checkReplyOf(msg);
        if (!verdict) return;
        const p = onMsg(msg, verdict.reply, verdict.caller).catch((err) =>
          this.opts.log?.('error', 'handler crashed', { subject, err: String(err) }),
        );
        this.inFlight.add(p);
        void p.finally(() => this.inFlight.delete(p));
      },
    });
    this.serving.push(sub);
    return sub;
  }

  /**
   * The reply subject and caller of a request this bus may answer (reply-inbox.ts); otherwise
   * undefined, and the request is logged (subjects only, never the payload) and counted.
   */
  private checkReplyOf(msg: Msg): { reply: string; caller: string } | undefined {
    const verdict = checkReply(msg.reply, this.opts.user !== undefined);
    if (verdict.ok) return verdict;
    this.stats.refusedReplies++;
    this.refusals.note('reply', `refused a request to ${msg.subject}: ${verdict.reason}`, {
      subject: msg.subject,
      reply: (msg.reply ?? '').slice(0, 200),
    });
    return undefined;
  }

  /** For $SRV discovery, which answers with msg.respond. */
  private mayAnswer(msg: Msg): boolean {
    return this.checkReplyOf(msg) !== undefined;
  }

  /** Parses the request, sets up cancellation and deadline, runs `work`, turns failures into `fail`. */
  private async runHandler<S extends z.ZodType>(
    msg: Msg,
    caller: string,
    opts: ServeOptions,
    schema: S,
    work: (req: z.infer<S>, ctx: HandlerContext) => Promise<void>,
    fail: (err: BusError) => void,
  ): Promise<void> {
    // The ids become cancel subject tokens: anything else is refused (below) under fresh ids.
    const idHeader = (name: string): string | undefined | null => {
      const v = msg.headers?.get(name);
      if (!v) return undefined;
      return SubjectToken.safeParse(v).success ? v : null;
    };
    const givenQueryId = idHeader(H.queryId);
    const givenCallId = idHeader(H.callId);
    const givenOrigin = idHeader(H.origin);
    const badIds = givenQueryId === null || givenCallId === null;
    const queryId = givenQueryId || randomUUID();
    const callId = givenCallId || randomUUID().replaceAll('-', '');
    // The query's origin may cancel this call too; a request that names none started its query.
    const origin = givenOrigin && givenOrigin !== ANONYMOUS_CALLER ? givenOrigin : undefined;
    const callerDeadline = Number(msg.headers?.get(H.deadline)) || Infinity;
    const ownDeadline = opts.timeoutMs ? Date.now() + opts.timeoutMs : Infinity;
    const deadlineAt = Math.min(callerDeadline, ownDeadline);
    const handlerSpan = startHandlerSpan(msg.subject, queryId, msg.headers);
    const traceparent = handlerSpan.traceparent;
    const controller = new AbortController();
    const timer =
      deadlineAt === Infinity
        ? undefined
        : setTimeout(
            () => controller.abort(new BusError('deadline_exceeded', 'deadline passed')),
            Math.max(0, deadlineAt - Date.now()),
          );
    const forget = this.work.add(queryId, callId, { caller, origin }, controller);
    this.stats.inFlight++;
    const deadline = deadlineAt === Infinity ? undefined : deadlineAt;
    const ctx: HandlerContext = {
      queryId,
      callId,
      signal: controller.signal,
      deadline,
      traceparent,
      onward: (extra = {}) => ({
        queryId,
        deadline,
        signal: controller.signal,
        traceparent,
        origin: origin ?? caller,
        ...extra,
      }),
    };
    let failure: BusError | undefined;
    const started = performance.now();
    try {
      if (badIds) {
        throw new BusError('bad_request', `${H.queryId} and ${H.callId} must be 1-100 of A-Z a-z 0-9 _ -`);
      }
      const req = decodeWith(schema, msg.data, 'bad_request', `request to ${msg.subject}`);
      await withContext(handlerSpan.context, () => work(req, ctx));
      this.stats.served++;
    } catch (err) {
      let e = BusError.from(err);
      if (controller.signal.aborted) {
        const reason: unknown = controller.signal.reason;
        e = reason instanceof BusError ? reason : new BusError('cancelled', 'cancelled');
      }
      if (e.code === 'cancelled') this.stats.cancelled++;
      else {
        this.stats.failed++;
        if (e.code === 'internal') this.opts.log?.('error', e.message, { subject: msg.subject, queryId });
      }
      failure = e;
      fail(e);
    } finally {
      handlerSpan.end(failure);
      const seconds = (performance.now() - started) / 1000;
      this.observer?.handled(msg.subject, failure?.code ?? 'ok', seconds);
      this.discovery.record(
        msg.subject,
        seconds,
        failure && failure.code !== 'cancelled' ? failure.message : undefined,
      );
      clearTimeout(timer);
      this.stats.inFlight--;
      forget();
    }
  }

  private onCancel(subject: string): void {
    const req = parseCancelSubject(subject);
    if (!req) return;
    const { refused } = this.work.cancel(req);
    if (refused === 0) return;
    this.stats.refusedCancels += refused;
    this.refusals.note(
      'cancel',
      `refused a cancel from ${req.by}: it neither made the call nor started the query`,
      {
        subject,
      },
    );
  }

  /**
   * Stops taking work, lets what runs finish (up to `graceMs`, then aborts it), and drains NATS.
   */
  async drain(graceMs = 10_000): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all(this.serving.map((s) => s.drain().catch(() => undefined)));
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    const done = Promise.all([...this.inFlight]).then(() => 'done' as const);
    if ((await Promise.race([done, timeout])) === 'timeout') {
      this.work.abortAll();
      await Promise.race([done, new Promise((r) => setTimeout(r, 1_000).unref())]);
    }
    this.cancelSub.unsubscribe();
    this.discovery.stop();
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => undefined);
  }
}

/** Each chunk's schema as an array's, for messages that carry several (H.chunks). */
const chunkArrays = new WeakMap<z.ZodType, z.ZodType>();
/** The chunks one stream message carries: one, or H.chunks of them as a JSON array. */
function chunksOf(contract: StreamContract<z.ZodType, z.ZodType>, msg: Msg): unknown[] {
  const what = `chunk of ${contract.subject}`;
  const count = msg.headers?.get(H.chunks);
  if (!count) return [decodeWith(contract.chunk, msg.data, 'internal', what)];
  const n = Number(count);
  let schema = chunkArrays.get(contract.chunk);
  if (!schema) chunkArrays.set(contract.chunk, (schema = z.array(contract.chunk)));
  const chunks = decodeWith(schema, msg.data, 'internal', what) as unknown[];
  if (!Number.isInteger(n) || n < 2 || chunks.length !== n)
    throw new BusError('internal', `${what} says it carries ${count} chunks and carries ${chunks.length}`);
  return chunks;
}

function isNoResponders(msg: Msg): boolean {
  return msg.headers?.code === 503 && msg.data.length === 0;
}

/** What nextTurn resolves to: the other side of the race was not ready within this turn. */
const NOT_YET = Symbol('not yet');
const nextTurn = (): Promise<typeof NOT_YET> => new Promise((resolve) => setImmediate(resolve, NOT_YET));
/**
 * How long a chunk its contract lets join the next (joinsNext) waits for it. Short beside what a
 * person notices, long beside what a query without a model takes to its first result.
 */
export const JOIN_WAIT_MS = 25;
/** NOT_YET once `ms` have passed; `clear` lets the timer go when the race is decided first. */
function waitUpTo(ms: number): { done: Promise<typeof NOT_YET>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<typeof NOT_YET>((resolve) => {
    timer = setTimeout(resolve, ms, NOT_YET);
  });
  return { done, clear: () => clearTimeout(timer) };
}
/** Encoded chunks as one JSON array (each is a JSON text already). */
function joinChunks(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 1 + parts.length));
  let at = 0;
  out[at++] = 0x5b; // [
  parts.forEach((p, i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    out.set(p, at);
    at += p.length;
  });
  out[at++] = 0x5d; // ]
  return out;
}

/** What nextMessage returns when the connection came back before any message did. */
const LINK_LOST = Symbol('link lost');

/** One outgoing call: its headers (a new call id per attempt), payload, limits and span. */
interface PreparedCall {
  subject: string;
  queryId: string;
  readonly callId: string;
  /** A new call id for the next attempt, so a cancel of the earlier one does not stop it. */
  renew(): void;
  headers: MsgHdrs;
  payload: Uint8Array;
  signal: AbortSignal | undefined;
  remainingMs(): number;
  dispose(failure?: BusError): void;
}

/** Waits `ms`; an abort of `signal` ends the wait with a cancelled BusError. */
async function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch {
    throw new BusError('cancelled', 'cancelled by the caller');
  }
}
