/**
 * The one query runner of the gateway. Every surface (REST /ask in each dialect, the chat API,
 * MCP's tools, A2A's skills, /who) makes its AskRequest here from its validated inputs, and runs
 * it here: on the bus (contracts.ask) as the next turn of its conversation, within a deadline,
 * joined to the caller's trace, cancelled in every service when the caller stops it.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import { context, trace } from '@opentelemetry/api';
import { newTraceparent, parseTraceparent } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { AskRequest, SubjectToken, contracts } from '@askbus/contracts';
import type { AskFilters, Message } from '@askbus/contracts';
import type { ConversationTurns, TurnOptions } from '../conversations/index';

/** Names the router in failures of an ask ("the askbus router did not answer in time"). */
export const ROUTER = 'the askbus router';
/** Names the retriever in failures of its calls. */
export const RETRIEVER = 'the askbus retriever';

/** A new query id (a NATS subject token). */
export const newQueryId = (): string => randomUUID().replaceAll('-', '');

/**
 * `site` as a list of names: comma lists split, spaces made `_`, blanks and repeats dropped,
 * `all` when none is left or one of them is `all`.
 */
export function siteNames(site: string | readonly string[] | undefined): string[] {
  const parts = (typeof site === 'string' ? [site] : (site ?? [])).flatMap((s) => s.split(','));
  const names = [...new Set(parts.map((s) => s.trim().replace(/ /g, '_')).filter(Boolean))];
  if (names.length === 0 || names.some((n) => n.toLowerCase() === 'all')) return ['all'];
  return names;
}

/** What a surface knows of a question, validated by its own schema; the rest takes the defaults. */
export interface AskInputs {
  query: string;
  /** Site names as the client gave them (see siteNames); absent means all. */
  site?: string | readonly string[] | undefined;
  /** The client's query id when it gave one; used when it is a valid subject token. */
  queryId?: unknown;
  prev?: readonly string[] | undefined;
  /** `none` (NLWeb's) is `list`. */
  mode?: 'list' | 'summarize' | 'generate' | 'none' | undefined;
  conversationId?: string | undefined;
  maxResults?: number | undefined;
  minScore?: number | undefined;
  tool?: string | undefined;
  filters?: AskFilters | undefined;
}

/** The one way an AskRequest is made: the surface maps the issues to its own error form. */
export function askRequest(inputs: AskInputs): ReturnType<typeof AskRequest.safeParse> {
  const given = SubjectToken.safeParse(inputs.queryId);
  const mode = inputs.mode === undefined || inputs.mode === 'none' ? 'list' : inputs.mode;
  return AskRequest.safeParse({
    queryId: given.success ? given.data : newQueryId(),
    query: inputs.query,
    site: siteNames(inputs.site),
    prev: inputs.prev ?? [],
    mode,
    conversationId: inputs.conversationId ?? '',
    maxResults: inputs.maxResults ?? 10,
    minScore: inputs.minScore ?? 51,
    ...(inputs.tool !== undefined ? { tool: inputs.tool } : {}),
    ...(inputs.filters !== undefined ? { filters: inputs.filters } : {}),
  });
}

/**
 * The trace a request's bus calls join. With a recording span (OpenTelemetry on: the HTTP
 * request's, itself a child of an incoming traceparent) the bus takes the active context:
 * undefined. Otherwise the incoming W3C traceparent when it is valid, else a new trace.
 */
export function traceparentFrom(
  header: string | string[] | undefined,
  requestContext?: Context,
): string | undefined {
  if ((requestContext && trace.getSpan(requestContext)?.isRecording()) ?? false) return undefined;
  if (trace.getSpan(context.active())?.isRecording()) return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  return value && parseTraceparent(value) ? value.trim() : newTraceparent();
}

export interface RunOptions {
  /** The bus call's deadline (ms): the router answers within it or the run fails with a timeout. */
  timeoutMs: number;
  /**
   * The run's own time limit (ms): past it the run is stopped and `timedOut` says so (MCP, A2A
   * give the bus a little more, so that their own limit is what stops it).
   */
  stopAfterMs?: number;
  /** The caller's cancel: aborting stops the stream and cancels the query in every service. */
  signal?: AbortSignal;
  traceparent?: string | undefined;
  /** Runs the question as the next turn of its conversation (its `prev`, the stored answer). */
  turns?: ConversationTurns;
  /** Who asks (the conversation's scope) and the turn's options. */
  scope?: string;
  turn?: TurnOptions;
  /** Each message as it arrives; the stream waits for it. */
  onMessage(m: Message): Promise<void> | void;
  /** Told when the query starts and ends (tests, metrics). */
  onQuery?: (queryId: string, state: 'start' | 'end') => void;
  /** The message to keep in the conversation when the run fails (the surface's error message). */
  onFailure?: (err: unknown) => Message | undefined;
}

export interface AskRun {
  /** The request as it ran (a conversation's turn has its earlier questions in `prev`). */
  request: AskRequest;
  /** Why the answer did not finish: what the bus threw, or the stop. Absent when it finished. */
  error?: unknown;
  /** The caller's signal stopped it. */
  cancelled: boolean;
  /** Its own time limit (stopAfterMs) stopped it. */
  timedOut: boolean;
}

/**
 * Runs one AskRequest on the bus, handing each message to `onMessage`. Never throws: a failure
 * is the run's `error`, and the query is then cancelled in every service, whatever stopped it.
 */
export async function runAsk(bus: Bus, request: AskRequest, opts: RunOptions): Promise<AskRun> {
  const deadline = opts.stopAfterMs === undefined ? undefined : AbortSignal.timeout(opts.stopAfterMs);
  const signals = [opts.signal, deadline].filter((x): x is AbortSignal => x !== undefined);
  const signal = AbortSignal.any(signals);

  const turn = opts.turns
    ? await opts.turns.start(opts.scope ?? '', request, opts.turn)
    : { request, add: () => undefined, end: async () => undefined };
  const run: AskRun = { request: turn.request, cancelled: false, timedOut: false };
  const { queryId } = run.request;
  opts.onQuery?.(queryId, 'start');
  try {
    const stream = bus.stream(contracts.ask, run.request, {
      queryId,
      signal,
      timeoutMs: opts.timeoutMs,
      ...(opts.traceparent !== undefined ? { traceparent: opts.traceparent } : {}),
    });
    for await (const m of stream) {
      turn.add(m);
      await opts.onMessage(m);
    }
    // A stream that ended because it was stopped is no answer.
    if (signal.aborted) throw new Error('stopped');
  } catch (err) {
    run.error = err;
    run.timedOut = (deadline?.aborted ?? false) && !(opts.signal?.aborted ?? false);
    run.cancelled = opts.signal?.aborted ?? false;
    // Stop the query in every service, whatever stopped it here.
    bus.cancel(queryId);
    const kept = opts.onFailure?.(err);
    if (kept) turn.add(kept);
  } finally {
    opts.onQuery?.(queryId, 'end');
    void turn.end();
  }
  return run;
}
