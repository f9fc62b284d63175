/**
 * `who`: which loaded sites can answer a query. REST /who, MCP's `who` tool and A2A's `who`
 * skill all ask the router for its who tool (services/tool-who), so that there is one answer:
 * the ranked sites come back as the tool's result items (contracts whoSiteItem).
 */
import { BusError } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { contracts, whoSiteOf } from '@askbus/contracts';
import type { WhoSite } from '@askbus/contracts';
import { failureOf } from '../errors';
import type { Failure } from '../errors';
import { AnswerFold } from './fold';
import { RETRIEVER, ROUTER, askRequest, runAsk } from './runner';

export interface WhoQuery {
  query: string;
  /** At most this many sites (default 10). */
  maxSites?: number;
  /**
   * Only items of these schema.org types count (case-insensitive: `movie` finds `Movie`).
   * Sites holding none of them are left out.
   */
  types?: string[];
}

export interface WhoOptions {
  /** Time limit of the whole ranking on the bus (ms). */
  timeoutMs: number;
  signal?: AbortSignal;
  traceparent?: string | undefined;
}

/**
 * The sites that can answer `q`, best first, from the router's who tool. A failure is thrown
 * as it came (a BusError), the router's error message too.
 */
export async function rankSites(bus: Bus, q: WhoQuery, opts: WhoOptions): Promise<WhoSite[]> {
  const parsed = askRequest({
    query: q.query,
    site: 'all',
    tool: 'who',
    maxResults: q.maxSites ?? 10,
    ...(q.types?.length ? { filters: { type: q.types } } : {}),
  });
  if (!parsed.success) throw new BusError('bad_request', parsed.error.issues[0]?.message ?? 'invalid query');
  const fold = new AnswerFold(parsed.data);
  let failure: Failure | undefined;
  const run = await runAsk(bus, parsed.data, {
    timeoutMs: opts.timeoutMs,
    ...(opts.signal ? { signal: opts.signal } : {}),
    traceparent: opts.traceparent,
    onMessage: (m) => {
      const step = fold.add(m);
      if (step.kind === 'error') failure ??= step.failure;
    },
  });
  if (run.error !== undefined) throw run.error;
  if (failure) throw new BusError(failure.code, failure.error);
  // Results that are no site (a router that searched instead) are not an answer to who.
  return fold.answer.results.flatMap((item) => whoSiteOf(item) ?? []);
}

/** A failed who as clients see it: the router, or the retriever behind the who tool, was not there. */
export function whoFailure(err: unknown): Failure {
  const e = BusError.from(err);
  return failureOf(e, e.message.includes(contracts.ask.subject) ? ROUTER : RETRIEVER);
}
