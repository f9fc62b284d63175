import type { z } from 'zod';
import type {
  AskRequest,
  MessageBody,
  ResultItem,
  RetrievedItem,
  ScoredItem,
  SearchOutcome,
  SearchRequest,
  StoredItem,
  Understanding,
} from '@askbus/contracts';
import { toResultItem } from '@askbus/contracts';
import { passesFilters, typesOf } from './filters';
import { BusError } from '@askbus/bus';
import { beforeAbort, passedDeadline, untilDeadline } from './deadline';
import { mergeAsync } from './merge';
import { FallbackTally, locallyScoredNote, UNRANKED_NO_RANKER, unrankedNote } from './degrade';

/** What the search path needs from the rest of the system: over NATS, or in one process. */
export interface SearchPorts {
  retrieve(
    req: z.input<typeof SearchRequest>,
    signal: AbortSignal,
  ): Promise<RetrievedItem[] | { items: RetrievedItem[]; outcome?: SearchOutcome }>;
  /**
   * Scores for `items`, a batch at a time as they are scored (over NATS the items go out as
   * RankItems; the caller keeps the whole items and joins the scores to them by URL).
   */
  score(
    query: string,
    items: StoredItem[],
    signal: AbortSignal,
    understanding?: Understanding,
  ): AsyncIterable<ScoredItem[]>;
  /** The question as structure against the sites' profiles (absent: plain text search). */
  understand?(query: string, site: string[], signal: AbortSignal): Promise<Understanding | undefined>;
  /** Items per `score` call for this query, when the ports know better than the settings (RankBatching). */
  rankBatchSize?(): number;
}

/** What the search path found out, for what follows it (summaries, answers). */
export interface SearchFindings {
  understanding?: Understanding;
  outcome?: SearchOutcome;
}

export interface SearchSettings {
  /** Candidates asked of the retriever (NLWeb: 50). */
  numCandidates: number;
  /**
   * Items per ranker call; calls run in parallel, spread over the ranker replicas. Over NATS,
   * unless set (ASKBUS_RANK_BATCH), it holds while a model scores: rankers that score locally get
   * a query's candidates in one call (RankBatching).
   */
  rankBatchSize: number;
  /** Scores above this are sent at once (NLWeb: > 59). */
  earlySendThreshold: number;
  /**
   * Scores that arrive within this window are sent together, best first. NLWeb sends each
   * early result the moment it is scored, so a burst arrives in completion order; a window of a
   * few milliseconds costs nothing noticeable and keeps the best items first.
   */
  collateMs: number;
  /**
   * For one query: when it stops waiting and answers with what it has (epoch ms). Retrieval
   * still running then ends the query with an error (there is nothing to answer from); for
   * ranking, the items scored by then are answered, the ranking calls still running are
   * cancelled (the rankers abort their model calls), and when nothing was scored the candidates
   * go out in retrieval order, labelled unranked; a summary or answer being written is cut
   * there (see postRanking).
   */
  rankDeadline?: number;
}

export const defaultSearchSettings: SearchSettings = {
  numCandidates: 50,
  rankBatchSize: 10,
  earlySendThreshold: 59,
  collateMs: 15,
};

/** Counters of one query, for logs and benchmarks. */
export interface SearchStats {
  retrieved: number;
  scored: number;
  failedBatches: number;
  sent: number;
  /** Ranking calls re-sent to the queue group after a replica failed mid-call. */
  retriedBatches?: number;
  /** Candidates that no ranker scored (failed calls, failed items, the deadline). */
  missingItems?: number;
  /** Ranking was stopped by `rankDeadline` before every call had answered. */
  deadlinePassed?: boolean;
  /**
   * Candidates sent unranked, in retrieval order, because nothing was scored by the deadline or
   * every ranking call failed.
   */
  unranked?: number;
  /** Items the local scorer scored because the rankers' model failed on them. */
  scoredLocally?: number;
}

/** Failures of a ranking call that mean "that replica is gone", not "this input is bad". */
const RETRYABLE = new Set(['no_responders', 'timeout', 'unavailable', 'cancelled', 'stream_gap']);

/**
 * One ranking call that survives a replica dying mid-call: when the stream fails with
 * no_responders / timeout / unavailable (or is cancelled by a draining replica while the query
 * itself goes on), the items not yet scored are sent once more to the queue group.
 */
export async function* scoreResilient(
  ports: SearchPorts,
  query: string,
  batch: StoredItem[],
  signal: AbortSignal,
  onRetry: () => void = () => undefined,
  understanding?: Understanding,
): AsyncGenerator<ScoredItem[], void, undefined> {
  const done = new Set<string>();
  try {
    for await (const scored of ports.score(query, batch, signal, understanding)) {
      for (const s of scored) done.add(s.url);
      yield scored;
    }
  } catch (err) {
    if (signal.aborted || !RETRYABLE.has(codeOf(err))) throw err;
    const rest = batch.filter((item) => !done.has(item.url));
    if (rest.length === 0) return;
    onRetry();
    yield* ports.score(query, rest, signal, understanding);
  }
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'internal';
}

/**
 * The search path of a query: retrieve candidates, score them in parallel batches, stream the
 * results as NLWeb does (early sends above the threshold, then the rest in score order up to
 * `maxResults`). Yields message bodies without the envelope; the caller stamps them.
 */
export async function* runSearch(
  req: AskRequest,
  ports: SearchPorts,
  signal: AbortSignal,
  settings: SearchSettings = defaultSearchSettings,
  stats: SearchStats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 },
  findings: SearchFindings = {},
): AsyncGenerator<MessageBody, ResultItem[], undefined> {
  const types = typesOf(req.filters);
  // the question as structure: a failure to understand it leaves the plain text search
  const understood = ports.understand
    ? await ports
        .understand(req.query, req.site, untilDeadline(signal, settings.rankDeadline))
        .catch((err: unknown) => {
          if (signal.aborted) throw err;
          return undefined;
        })
    : undefined;
  const retrieved = await retrieveBeforeDeadline(
    ports,
    {
      query: req.query,
      site: req.site,
      numResults: settings.numCandidates,
      ...(types ? { types } : {}),
      ...(understood ? { understanding: understood } : {}),
    },
    signal,
    settings.rankDeadline,
  );
  const { items, outcome }: { items: RetrievedItem[]; outcome?: SearchOutcome | undefined } = Array.isArray(
    retrieved,
  )
    ? { items: retrieved }
    : retrieved;
  const candidates = items.filter((item) => passesFilters(item, req.filters));
  // what the rankers are told: the constraints the retriever kept
  const understanding = understood && {
    ...understood,
    ...(outcome?.relaxed.length
      ? { constraints: understood.constraints.filter((k) => !outcome.relaxed.includes(k.text)) }
      : {}),
    ...(outcome?.orders ? { orders: outcome.orders } : {}),
  };
  if (understanding) findings.understanding = understanding;
  if (outcome) findings.outcome = outcome;
  stats.retrieved = candidates.length;
  if (outcome && outcome.relaxed.length > 0 && candidates.length > 0) {
    yield { message_type: 'status', content: relaxedMessage(understood!, outcome) };
  }
  if (candidates.length === 0) {
    yield { message_type: 'no_results', content: `No results were found for "${req.query}".` };
    return [];
  }
  // ties in score keep the retriever's order (it sorted superlatives exactly)
  const retrievalRank = new Map(candidates.map((c, i) => [c.url, i]));
  const byScore = (a: ResultItem, b: ResultItem): number =>
    b.score - a.score || (retrievalRank.get(a.url) ?? 0) - (retrievalRank.get(b.url) ?? 0);

  const byUrl = new Map(candidates.map((c) => [c.url, c]));
  // The rankers get what they read of each item (the ports say how); the whole items stay here.
  const batches: StoredItem[][] = [];
  const batchSize = ports.rankBatchSize?.() ?? settings.rankBatchSize;
  for (let i = 0; i < candidates.length; i += batchSize) {
    batches.push(candidates.slice(i, i + batchSize));
  }
  const failures: unknown[] = [];
  // The query's deadline cuts ranking short: the calls still running are cancelled through
  // this signal (the bus sends the cancel on), the query itself goes on with what it has.
  const rankSignal = untilDeadline(signal, settings.rankDeadline);
  const scoredStream = mergeAsync(
    batches.map((batch) =>
      scoreResilient(
        ports,
        req.query,
        batch,
        rankSignal,
        () => {
          stats.retriedBatches = (stats.retriedBatches ?? 0) + 1;
        },
        understanding,
      ),
    ),
    (err) => failures.push(err),
  );

  const sent = new Set<string>();
  const sentScores: number[] = [];
  const all: ResultItem[] = [];
  const locallyScored = new FallbackTally();
  const canSendEarly = (score: number): boolean => {
    if (score <= settings.earlySendThreshold || score <= req.minScore) return false;
    if (sentScores.length < req.maxResults - 3) return true;
    // Near the limit, an early result must beat one already sent (NLWeb's shouldSend).
    return sentScores.length < req.maxResults && sentScores.some((s) => score > s);
  };
  const takeSendable = (buffer: ResultItem[]): ResultItem[] => {
    const out: ResultItem[] = [];
    for (const r of buffer.sort(byScore)) {
      if (!canSendEarly(r.score)) continue;
      sent.add(r.url);
      sentScores.push(r.score);
      out.push(r);
    }
    return out;
  };

  // Collate scores that arrive close together, then send the sendable ones best first.
  let buffer: ResultItem[] = [];
  let windowEnds = 0;
  const unscored = new Set(byUrl.keys());
  for await (const batch of withTicks(scoredStream, settings.collateMs)) {
    if (passedDeadline(rankSignal, signal)) break;
    for (const scored of batch ?? []) {
      const item = byUrl.get(scored.url);
      // a ranker answered for an item we did not send it, or twice for one: ignore it
      if (!item || !unscored.delete(scored.url)) continue;
      stats.scored++;
      locallyScored.add(scored.fallbackReason);
      const result = toResultItem(item, scored.score, scored.description, scored.debug);
      all.push(result);
      buffer.push(result);
      if (windowEnds === 0) windowEnds = Date.now() + settings.collateMs;
    }
    if (buffer.length > 0 && Date.now() >= windowEnds) {
      const early = takeSendable(buffer);
      buffer = [];
      windowEnds = 0;
      if (early.length > 0) yield { message_type: 'result', content: early };
    }
  }
  const scoredUrls = new Set(all.map((r) => r.url));
  const missing = candidates.filter((c) => !scoredUrls.has(c.url)).length;
  stats.missingItems = missing;
  // Cut short by the deadline: the calls it cancelled did not fail, they ran out of time.
  const cutShort = passedDeadline(rankSignal, signal) && missing > 0;
  const failed = cutShort ? failures.filter((err) => codeOf(err) !== 'cancelled') : failures;
  stats.failedBatches = failed.length;
  if (cutShort) stats.deadlinePassed = true;
  if (cutShort && all.length === 0) {
    const unranked = candidates.slice(0, req.maxResults).map((c) => toResultItem(c, 0, UNRANKED));
    stats.unranked = unranked.length;
    stats.sent = unranked.length;
    yield {
      message_type: 'status',
      content: `Ranking did not finish before the query's deadline and no item was scored: these ${unranked.length} of ${candidates.length} candidates are unranked, in retrieval order.`,
    };
    yield { message_type: 'result', content: unranked };
    return unranked;
  }
  if (!cutShort && failures.length === batches.length && all.length === 0) {
    // Every ranking call failed (no ranker answers, every replica broke): the candidates are
    // still an answer, unranked and said so, rather than an error.
    const unranked = candidates.slice(0, req.maxResults).map((c) => toResultItem(c, 0, UNRANKED_NO_RANKER));
    stats.unranked = unranked.length;
    stats.sent = unranked.length;
    const first = failures[0];
    const why = `${codeOf(first)}: ${first instanceof Error ? first.message : String(first)}`;
    yield { message_type: 'status', content: unrankedNote(unranked.length, candidates.length, why) };
    yield { message_type: 'result', content: unranked };
    return unranked;
  }

  // The rest, best first, above min_score, up to max_results in all.
  const rest = all
    .filter((r) => !sent.has(r.url) && r.score > req.minScore)
    .sort(byScore)
    .slice(0, Math.max(0, req.maxResults - sent.size));
  for (const r of rest) sent.add(r.url);
  if (rest.length > 0) yield { message_type: 'result', content: rest };
  if (locallyScored.total > 0) {
    stats.scoredLocally = locallyScored.total;
    yield { message_type: 'status', content: locallyScoredNote(locallyScored, candidates.length) };
  }
  if (cutShort || failed.length > 0 || missing > 0) {
    yield {
      message_type: 'status',
      content: incompleteRanking(cutShort, failed.length, batches.length, missing, candidates.length),
    };
  }
  stats.sent = sent.size;
  const final = all.filter((r) => sent.has(r.url)).sort(byScore);
  if (final.length === 0) {
    yield { message_type: 'no_results', content: `Nothing relevant enough was found for "${req.query}".` };
  }
  return final;
}

/** Says which parts of the question were dropped because together they left nothing. */
function relaxedMessage(u: Understanding, outcome: SearchOutcome): string {
  const noun = u.noun || 'item';
  const dropped = outcome.relaxed.map((t) => `“${t}”`).join(' and ');
  return `No ${noun} matched every part of the question, so ${dropped} ${outcome.relaxed.length > 1 ? 'were' : 'was'} left out: these ${outcome.matched} match the rest.`;
}

/**
 * The retrieval call, bounded by the query's deadline: past it the call is cancelled and the
 * query fails with deadline_exceeded, since without candidates there is nothing to answer from.
 */
async function retrieveBeforeDeadline(
  ports: SearchPorts,
  req: z.input<typeof SearchRequest>,
  signal: AbortSignal,
  deadline: number | undefined,
): Promise<RetrievedItem[] | { items: RetrievedItem[]; outcome?: SearchOutcome }> {
  const retrieveSignal = untilDeadline(signal, deadline);
  try {
    // Raced with the signal too, so a retriever port slow to notice the abort cannot hold the query.
    return await beforeAbort(ports.retrieve(req, retrieveSignal), retrieveSignal);
  } catch (err) {
    if (!passedDeadline(retrieveSignal, signal)) throw err;
    throw new BusError(
      'deadline_exceeded',
      "Retrieval did not finish before the query's deadline, so there is nothing to answer from.",
    );
  }
}

/** The description of an item sent without a score. */
export const UNRANKED = 'Unranked: no score was given before the deadline.';

/** The warning that ends a query whose ranking did not cover every candidate. */
function incompleteRanking(
  cutShort: boolean,
  failedCalls: number,
  calls: number,
  missing: number,
  candidates: number,
): string {
  const failures = failedCalls > 0 ? `; ${failedCalls} of ${calls} ranking calls failed` : '';
  if (cutShort) {
    return `Ranking is incomplete: it was stopped at the query's deadline${failures}; ${missing} of ${candidates} items were not ranked and are missing.`;
  }
  return `Ranking is incomplete: ${failedCalls} of ${calls} ranking calls failed; ${missing} of ${candidates} items could not be ranked and are missing.`;
}

/**
 * Passes values through and adds an `undefined` tick every `ms` while the source is quiet,
 * so a collation window closes on time even when no further value arrives.
 */
async function* withTicks<T>(source: AsyncIterable<T>, ms: number): AsyncGenerator<T | undefined> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  try {
    yield* ticking();
  } finally {
    void it.return?.().catch(() => undefined);
  }
  async function* ticking(): AsyncGenerator<T | undefined> {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((r) => (timer = setTimeout(() => r('tick'), ms)));
      const winner = await Promise.race([next, tick]);
      clearTimeout(timer);
      if (winner === 'tick') {
        yield undefined;
        continue;
      }
      if (winner.done) return;
      yield winner.value;
      next = it.next();
    }
  }
}
