import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { contracts, SiteName, type StoredItem } from '@askbus/contracts';
import { BusError, connectBus, type Bus } from '@askbus/bus';
import { FORMATS, loadSource, type Format, type IngestError } from '@askbus/ingest';
import { natsUrlFor } from './data-dir';

/** How long a batch is resent while no retriever answers (a restarting retriever needs a while). */
const DEFAULT_RETRY_FOR_MS = 60_000;

export const loadUsage = `Usage: askbus load <file|dir|url> --site NAME [options]
       askbus load --site NAME --delete-site

Loads schema.org data into the retriever over NATS: JSON-LD (.json/.jsonld: an item, an array,
an @graph), NLWeb's url<TAB>json[<TAB>vector] files, JSON lines, CSV with a header row (columns
are schema.org properties), HTML pages with <script type="application/ld+json">, RSS and Atom
feeds. A directory is read recursively; a URL must be http(s). Re-loading replaces items by URL.
A load that stores nothing fails (exit status 1) and says why.

Options:
  --site NAME       the site the items belong to (letters, digits, "_", "." or "-")
  --delete-site     remove the site's items first (alone: only remove them)
  --type TYPE       @type for records without one (CSV rows, JSON lines); a CSV file without
                    a @type column needs it
  --move            take items whose URL another site holds into this one (without it they
                    are refused and named)
  --format FORMAT   ${FORMATS.join(' | ')} (default: by extension and content)
  --retry-for SECS  when the retriever goes away mid-load, resend the batch for this long
                    before giving up (default ${DEFAULT_RETRY_FOR_MS / 1000})
  --quiet           no progress bar

Environment: NATS_URL — the NATS server the retriever listens on; without it, the server a running
\`askbus up\` started (noted in ASKBUS_DATA_DIR), else nats://127.0.0.1:4222.
`;

/** Each NATS message stays well under NATS's default 1 MB limit. */
export const MAX_BATCH_BYTES = 700_000;
const MAX_BATCH_ITEMS = 2_000;
const UPSERT_TIMEOUT_MS = 120_000;
/** While a batch is in flight, how often to ask whether any retriever is there at all. */
const PROBE_EVERY_MS = 500;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 4_000;
/** Failures that mean the retriever is gone (for now); upsert and delete are idempotent, so resending is safe. */
const RETRIEVER_GONE = new Set(['no_responders', 'timeout', 'deadline_exceeded']);

export interface LoadOptions {
  source?: string;
  site: string;
  deleteSite?: boolean;
  defaultType?: string;
  /** Move items whose URL another site holds into this one (else they are skipped, named). */
  move?: boolean;
  format?: Format;
  /** A progress bar on stderr (only when it is a terminal). */
  progress?: boolean;
  batchBytes?: number;
  /** How long to resend a batch while no retriever answers (default 60 s). */
  retryForMs?: number;
  /** Told of each batch the retriever acknowledged (it is durable there once acknowledged). */
  onAcknowledged?: (items: readonly StoredItem[]) => void;
  /** Told when a request is resent because the retriever went away. */
  onRetry?: (reason: string) => void;
}

/** The retriever went away mid-load and did not come back in time. */
export class LoadInterruptedError extends Error {
  override name = 'LoadInterruptedError';
  constructor(
    message: string,
    /** Items the retriever acknowledged before it went away: those are stored. */
    readonly acknowledged: number,
  ) {
    super(message);
  }
}

export interface LoadSummary {
  loaded: number;
  /** Items the retriever acknowledged (stored durably); equals `loaded` after a complete load. */
  acknowledged: number;
  /** Requests resent because the retriever went away. */
  retries: number;
  skipped: number;
  /** Skipped records by reason, most frequent first. */
  reasons: { reason: string; count: number }[];
  /** The first skipped records, with file and line. */
  errors: IngestError[];
  deleted: number;
  batches: number;
  seconds: number;
  /** Items in the retriever over all sites after the load. */
  total: number;
}

const MAX_KEPT_ERRORS = 20;
/** A reason without its record-specific details ("bad JSON: Unexpected token } at 31"). */
const reasonKind = (r: string): string => r.replace(/:.*$/, '');

/** Streams a source's items to the retriever in batches; returns what happened. */
export async function runLoad(bus: Bus, opts: LoadOptions): Promise<LoadSummary> {
  const site = SiteName.parse(opts.site);
  const t0 = performance.now();
  const maxBytes = opts.batchBytes ?? MAX_BATCH_BYTES;
  const summary: LoadSummary = {
    loaded: 0,
    acknowledged: 0,
    retries: 0,
    skipped: 0,
    reasons: [],
    errors: [],
    deleted: 0,
    batches: 0,
    seconds: 0,
    total: 0,
  };
  const reasons = new Map<string, number>();
  const skip = (error: IngestError): void => {
    summary.skipped++;
    const k = reasonKind(error.reason);
    reasons.set(k, (reasons.get(k) ?? 0) + 1);
    if (summary.errors.length < MAX_KEPT_ERRORS) summary.errors.push(error);
  };

  const retrying = <T>(what: string, send: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    sendRetrying(bus, send, {
      retryForMs: opts.retryForMs ?? DEFAULT_RETRY_FOR_MS,
      onRetry: (reason) => {
        summary.retries++;
        opts.onRetry?.(reason);
      },
      giveUp: (reason, waitedMs) =>
        new LoadInterruptedError(
          `the retriever stopped answering ${what} (${reason}) and did not come back within ` +
            `${Math.round(waitedMs / 1000)} s. ${summary.acknowledged} items were acknowledged by the retriever ` +
            `and are stored; running the same load again completes the site (items are replaced by URL).`,
          summary.acknowledged,
        ),
    });

  if (opts.deleteSite) {
    summary.deleted = (
      await retrying('the delete', (signal) =>
        bus.request(contracts.delete, { site }, { timeoutMs: UPSERT_TIMEOUT_MS, signal }),
      )
    ).deleted;
  }

  const bar =
    opts.progress && process.stderr.isTTY
      ? new cliProgress.SingleBar(
          {
            format: `loading ${site}  {value} items  {skipped} skipped  {speed} items/s  {duration_formatted}`,
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  bar?.start(0, 0, { skipped: 0, speed: 0 });

  let batch: StoredItem[] = [];
  let batchSize = 2;
  const flush = async (persist: boolean): Promise<void> => {
    const items = batch;
    const reply = await retrying(`batch ${summary.batches + 1}`, (signal) =>
      bus.request(
        contracts.upsert,
        { site, items, persist, move: opts.move ?? false },
        { timeoutMs: UPSERT_TIMEOUT_MS, signal },
      ),
    );
    summary.total = reply.total;
    summary.batches++;
    // Items another site holds stay there (unless --move): skipped, each named.
    const refused = new Set(reply.refused.map((r) => r.url));
    for (const r of reply.refused) {
      skip({
        file: opts.source ?? site,
        reason: `already in site "${r.site}" (--move moves it to "${site}"): ${r.url}`,
      });
    }
    summary.loaded -= refused.size;
    const stored = refused.size ? items.filter((i) => !refused.has(i.url)) : items;
    summary.acknowledged += stored.length;
    opts.onAcknowledged?.(stored);
    batch = [];
    batchSize = 2;
  };
  try {
    if (opts.source !== undefined) {
      const events = loadSource(opts.source, {
        site,
        ...(opts.defaultType ? { defaultType: opts.defaultType } : {}),
        ...(opts.format ? { format: opts.format } : {}),
      });
      for await (const ev of events) {
        if (ev.kind === 'error') {
          skip(ev.error);
          continue;
        }
        const size = Buffer.byteLength(JSON.stringify(ev.item)) + 1;
        if (size > maxBytes - 1_000) {
          skip({ file: opts.source, reason: `item ${ev.item.url} is larger than ${maxBytes} bytes` });
          continue;
        }
        if (batch.length >= MAX_BATCH_ITEMS || batchSize + size > maxBytes) await flush(false);
        batch.push(ev.item);
        batchSize += size;
        summary.loaded++;
        if ((summary.loaded & 255) === 0) {
          const secs = (performance.now() - t0) / 1000;
          bar?.update(summary.loaded, { skipped: summary.skipped, speed: Math.round(summary.loaded / secs) });
        }
      }
    }
    // the last request writes the index to disk
    await flush(true);
  } finally {
    bar?.update(summary.loaded, { skipped: summary.skipped });
    bar?.stop();
  }
  summary.reasons = [...reasons.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => ({ reason, count }));
  summary.seconds = (performance.now() - t0) / 1000;
  return summary;
}

/**
 * Sends a request until it is answered: when no retriever answers (no_responders, a timeout, or
 * one that vanished while the request was in flight: `probeRetriever` finds none left), it is sent again
 * with backoff for up to `retryForMs`, so a restarted retriever picks it up. Any other failure,
 * and running out of time, end it.
 */
async function sendRetrying<T>(
  bus: Bus,
  send: (signal: AbortSignal) => Promise<T>,
  opts: {
    retryForMs: number;
    onRetry: (reason: string) => void;
    giveUp: (reason: string, waitedMs: number) => Error;
  },
): Promise<T> {
  let firstFailure: number | undefined;
  let backoff = FIRST_BACKOFF_MS;
  for (;;) {
    const attempt = new AbortController();
    const probing = new AbortController();
    let vanished = false;
    void probeRetriever(bus, probing.signal).then((gone) => {
      if (gone) {
        vanished = true;
        attempt.abort();
      }
    });
    let reason: string;
    try {
      return await send(attempt.signal);
    } catch (err) {
      const code = err instanceof BusError ? err.code : undefined;
      if (vanished) reason = 'it vanished while a request was in flight';
      else if (code && RETRIEVER_GONE.has(code)) reason = code;
      else throw err;
    } finally {
      probing.abort();
    }
    const now = Date.now();
    firstFailure ??= now;
    if (now - firstFailure >= opts.retryForMs) throw opts.giveUp(reason, now - firstFailure);
    opts.onRetry(reason);
    await sleep(Math.min(backoff, firstFailure + opts.retryForMs - now));
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

/**
 * Resolves true once no retriever is left to answer (`no_responders`); false when stopped.
 * A busy retriever may answer slowly: only "nobody is there" counts.
 */
async function probeRetriever(bus: Bus, stop: AbortSignal): Promise<boolean> {
  while (!stop.aborted) {
    await sleep(PROBE_EVERY_MS, stop);
    if (stop.aborted) return false;
    try {
      await bus.request(contracts.sites, {}, { timeoutMs: UPSERT_TIMEOUT_MS, signal: stop });
    } catch (err) {
      if (err instanceof BusError && err.code === 'no_responders') return true;
    }
  }
  return false;
}

/** Waits `ms`, or less when `signal` aborts (an abort ends the wait, it is not an error). */
const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal ? { signal } : {}).catch(() => undefined);

export function formatSummary(site: string, s: LoadSummary): string {
  const lines = [
    `${site}: loaded ${s.loaded} items, skipped ${s.skipped}${s.deleted ? `, deleted ${s.deleted} first` : ''} in ${s.seconds.toFixed(1)} s` +
      (s.loaded ? ` (${Math.round(s.loaded / Math.max(s.seconds, 1e-3))} items/s)` : '') +
      `; the retriever now holds ${s.total} items`,
  ];
  if (s.retries) lines.push(`  resent ${s.retries}× after the retriever went away`);
  for (const r of s.reasons) lines.push(`  skipped ${r.count}× ${r.reason}`);
  for (const e of s.errors) {
    const where = e.line !== undefined ? `:${e.line}` : e.record !== undefined ? ` record ${e.record}` : '';
    lines.push(`    ${e.file}${where}: ${e.reason}`);
  }
  if (s.skipped > s.errors.length) lines.push(`    … and ${s.skipped - s.errors.length} more`);
  return lines.join('\n');
}

/**
 * Why a load of `source` stored nothing, if it did (exit status 1): the most frequent reasons
 * its records were skipped. A bare --delete-site stores nothing by design.
 */
export function nothingStored(s: LoadSummary, source: string | undefined): string | undefined {
  if (source === undefined || s.acknowledged > 0) return undefined;
  if (s.skipped === 0) return `nothing was stored: ${source} holds no schema.org items`;
  const why = s.reasons
    .slice(0, 3)
    .map((r) => `${r.count}× ${r.reason}`)
    .join('; ');
  return `nothing was stored from ${source}; skipped: ${why}`;
}

/** `askbus load …` with its own arguments. */
export async function loadMain(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      site: { type: 'string' },
      'delete-site': { type: 'boolean' },
      move: { type: 'boolean' },
      type: { type: 'string' },
      format: { type: 'string' },
      'retry-for': { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(loadUsage);
    return;
  }
  const source = positionals[0];
  if (!values.site || (!source && !values['delete-site']) || positionals.length > 1) {
    throw new Error(`expected one source and --site NAME\n\n${loadUsage}`);
  }
  if (values.format && !FORMATS.includes(values.format as Format)) {
    throw new Error(`unknown --format "${values.format}" (one of ${FORMATS.join(', ')})`);
  }
  const retryFor = values['retry-for'] === undefined ? undefined : Number(values['retry-for']);
  if (retryFor !== undefined && !(retryFor >= 0)) {
    throw new Error(`--retry-for takes seconds, not "${values['retry-for']}"`);
  }
  const nats = natsUrlFor();
  let bus: Bus;
  try {
    bus = await connectBus({ service: 'askbus-load', servers: nats.url });
  } catch (err) {
    throw new Error(
      `cannot reach NATS at ${nats.url} (${nats.from}): ${err instanceof Error ? err.message : String(err)}. ` +
        'Start askbus with `npm run up` (the CLI then finds its NATS through ASKBUS_DATA_DIR, ./.data by default), ' +
        'or set NATS_URL to the NATS your services use.',
      { cause: err },
    );
  }
  try {
    const summary = await runLoad(bus, {
      site: values.site,
      progress: !values.quiet,
      ...(source ? { source } : {}),
      ...(values['delete-site'] ? { deleteSite: true } : {}),
      ...(values.type ? { defaultType: values.type } : {}),
      ...(values.move ? { move: true } : {}),
      ...(values.format ? { format: values.format as Format } : {}),
      ...(retryFor !== undefined ? { retryForMs: retryFor * 1000 } : {}),
      onRetry: (reason) => console.error(`askbus load: no answer from the retriever (${reason}); resending`),
    });
    console.log(formatSummary(values.site, summary));
    const nothing = nothingStored(summary, source);
    if (nothing) throw new Error(nothing);
  } finally {
    await bus.drain();
  }
}
