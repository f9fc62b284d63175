/**
 * `askbus ask` and `askbus sites`: clients of a running gateway over HTTP. `ask` prints the
 * answer as it streams (rank, score, name, description, URL), or one JSON message per line.
 */
import { parseArgs } from 'node:util';
import {
  HttpError,
  UsageError,
  apiKeyOf,
  fetchSites,
  gatewayUrl,
  streamAsk,
  DEFAULT_URL,
  type NlwebMessage,
} from './client';

export const ASK_USAGE = `Usage: askbus ask [options] <question...>

Asks a running askbus gateway and prints the answer as it streams in:
rank, score, name, description and URL of each result.

Options:
  -s, --site <name>      the site to ask (repeat or comma-separate for several; default: all)
  -m, --mode <mode>      list (default), summarize or generate
  -n, --max <n>          at most n results (1 to 100; the gateway's default is 10)
      --prev <question>  an earlier question of the conversation (repeatable, oldest first)
      --conversation-id <id>
      --json             print each NLWeb message as one JSON line, as it arrives
      --url <url>        the gateway (default: ASKBUS_URL, else ${DEFAULT_URL})
      --api-key <key>    the API key a gateway with access control requires (default: ASKBUS_API_KEY)
  -h, --help             show this help

Exit status: 0 answered, 1 the answer failed or the gateway is unreachable, 2 usage error.

Example: askbus ask --site movies "westerns with clint eastwood"
`;

export const SITES_USAGE = `Usage: askbus sites [options]

Lists the sites a running askbus gateway can answer about, with their item counts and types.

Options:
      --json        print the gateway's JSON answer
      --url <url>   the gateway (default: ASKBUS_URL, else ${DEFAULT_URL})
      --api-key <key>
                    the API key a gateway with access control requires (default: ASKBUS_API_KEY)
  -h, --help        show this help
`;

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Whether to colour the output (a terminal, and NO_COLOR unset). */
  color: boolean;
  signal?: AbortSignal;
}

export function processIo(signal?: AbortSignal): Io {
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env: process.env,
    color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
    ...(signal ? { signal } : {}),
  };
}

const MODES = ['list', 'summarize', 'generate'];
const DESCRIPTION_MAX = 300;

/** One-line text of any JSON value (schema.org values are often objects or lists). */
export function textOf(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v.replace(/\s+/g, ' ').trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (depth > 3) return '…';
  if (Array.isArray(v))
    return v
      .map((x) => textOf(x, depth + 1))
      .filter(Boolean)
      .join(', ');
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.name === 'string') return o.name;
    if ('value' in o)
      return [textOf(o.value, depth + 1), textOf(o.unitText, depth + 1)].filter(Boolean).join(' ');
    return Object.entries(o)
      .filter(([k]) => !k.startsWith('@'))
      .map(([k, x]) => `${k}: ${textOf(x, depth + 1)}`)
      .join('; ');
  }
  return '';
}

/** Strips terminal control characters from data, so no answer can drive the terminal. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const clean = (s: string): string => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');

const clip = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

function styles(color: boolean) {
  const wrap = (open: number, close: number) => (s: string) =>
    color ? `\x1b[${open}m${s}\x1b[${close}m` : s;
  return { bold: wrap(1, 22), dim: wrap(2, 22), cyan: wrap(36, 39), red: wrap(31, 39) };
}

/** Formats the human-readable lines of each message; keeps the rank across result batches. */
export class AnswerPrinter {
  private rank = 0;
  private pendingAnswer: NlwebMessage | undefined;
  private printedSomething = false;
  errors = 0;
  private readonly s: ReturnType<typeof styles>;

  constructor(private readonly io: Io) {
    this.s = styles(io.color);
  }

  get results(): number {
    return this.rank;
  }

  private out(lines: string[]): void {
    this.printedSomething = true;
    this.io.out(lines.map(clean).join('\n') + '\n');
  }

  private item(it: Record<string, unknown>): string[] {
    this.rank += 1;
    const score = typeof it.score === 'number' ? Math.round(it.score) : undefined;
    const pad = '    ';
    const lines = [
      `${String(this.rank).padStart(2)}. ${score !== undefined ? `${this.s.cyan(`[${score}]`)} ` : ''}${this.s.bold(textOf(it.name) || 'Untitled')}`,
    ];
    const description = textOf(it.description);
    if (description) lines.push(pad + clip(description, DESCRIPTION_MAX));
    if (typeof it.url === 'string' && it.url) lines.push(pad + this.s.dim(it.url));
    return lines;
  }

  private flushAnswer(): void {
    const m = this.pendingAnswer;
    if (!m) return;
    this.pendingAnswer = undefined;
    const items = Array.isArray(m.items) ? (m.items as Record<string, unknown>[]) : [];
    this.out([
      '',
      `${this.s.bold('Answer:')} ${textOf(m.answer)}`,
      ...(items.length ? ['Sources:'] : []),
      ...items.map(
        (it, i) =>
          `  [${i + 1}] ${textOf(it.name)}${typeof it.url === 'string' ? `  ${this.s.dim(it.url)}` : ''}`,
      ),
      '',
    ]);
  }

  message(m: NlwebMessage): void {
    switch (m.message_type) {
      case 'begin-nlweb-response':
        return;
      case 'end-nlweb-response':
        this.flushAnswer();
        if (!this.printedSomething && !this.errors) this.out(['No results.']);
        return;
      case 'result':
        if (Array.isArray(m.content)) {
          for (const it of m.content)
            if (it && typeof it === 'object') this.out(this.item(it as Record<string, unknown>));
        } else this.out(['', `${this.s.bold('Summary:')} ${textOf(m.content)}`, '']);
        return;
      case 'nlws':
        // Sent once without its items, then again with them: print the last one.
        this.pendingAnswer = m;
        if (Array.isArray(m.items) && m.items.length) this.flushAnswer();
        return;
      case 'intermediate_message':
      case 'status':
        if (Array.isArray(m.content)) return;
        this.io.err(this.s.dim(`… ${clean(textOf(m.content ?? m.message))}`) + '\n');
        return;
      case 'decontextualized_query':
        this.io.err(this.s.dim(`(interpreted as: ${clean(textOf(m.decontextualized_query))})`) + '\n');
        return;
      case 'no_results':
      case 'ask_user':
      case 'site_is_irrelevant_to_query':
        this.out([textOf(m.content ?? m.message)]);
        return;
      case 'results_map': {
        const locations = Array.isArray(m.locations) ? (m.locations as Record<string, unknown>[]) : [];
        this.out([
          '',
          this.s.bold('Locations:'),
          ...locations.map((l) => `  - ${textOf(l.title)} — ${textOf(l.address)}`),
          '',
        ]);
        return;
      }
      case 'item_details': {
        const details = m.details;
        const rows =
          details && typeof details === 'object' && !Array.isArray(details)
            ? Object.entries(details).map(([k, v]) => `  ${k}: ${textOf(v)}`)
            : [`  ${textOf(details)}`];
        this.out([
          '',
          `${this.s.bold('Details:')} ${textOf(m.name)}${typeof m.url === 'string' ? `  ${this.s.dim(m.url)}` : ''}`,
          ...rows,
          ...(m.explanation ? [`  ${textOf(m.explanation)}`] : []),
          '',
        ]);
        return;
      }
      case 'compare_items': {
        const name = (x: unknown) => textOf((x as Record<string, unknown> | undefined)?.name);
        this.out([
          '',
          `${this.s.bold('Comparison:')} ${name(m.item1)} vs ${name(m.item2)}`,
          `  ${textOf(m.comparison)}`,
          '',
        ]);
        return;
      }
      case 'ensemble_result': {
        const result = (m.result ?? {}) as Record<string, unknown>;
        const rec = (result.recommendations ?? {}) as Record<string, unknown>;
        const items = Array.isArray(rec.items) ? (rec.items as Record<string, unknown>[]) : [];
        const tips = Array.isArray(rec.overall_tips) ? rec.overall_tips : [];
        this.out([
          '',
          this.s.bold(textOf(rec.theme) || 'Recommendations'),
          ...items.map(
            (it) =>
              `  - ${it.category ? `${textOf(it.category)}: ` : ''}${textOf(it.name)}${it.description ? ` — ${textOf(it.description)}` : ''}`,
          ),
          ...tips.map((t) => `  tip: ${textOf(t)}`),
          '',
        ]);
        return;
      }
      case 'error':
        this.errors += 1;
        this.io.err(
          `${this.s.red('error:')} ${clean(textOf(m.error))}${m.code ? ` (${clean(textOf(m.code))})` : ''}\n`,
        );
        return;
      default:
        return;
    }
  }

  /** At the end of the stream: an answer held back waiting for its items. */
  finish(): void {
    this.flushAnswer();
  }
}

function intOption(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < min || n > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got "${v}"`);
  }
  return n;
}

/** `askbus ask`; returns the exit status. */
export async function runAsk(argv: string[], io: Io): Promise<number> {
  let values: ReturnType<typeof parseAskArgs>['values'];
  let positionals: string[];
  let base: string;
  let apiKey: string | undefined;
  let maxResults: number | undefined;
  try {
    ({ values, positionals } = parseAskArgs(argv));
    if (values.help) {
      io.out(ASK_USAGE);
      return 0;
    }
    if (values.mode !== undefined && !MODES.includes(values.mode.toLowerCase())) {
      throw new UsageError(`--mode must be one of ${MODES.join(', ')}, got "${values.mode}"`);
    }
    maxResults = intOption('--max', values.max, 1, 100);
    base = gatewayUrl(values.url, io.env);
    apiKey = apiKeyOf(values['api-key'], io.env);
    if (positionals.join(' ').trim() === '') throw new UsageError('a question is required');
  } catch (err) {
    return usageFailure('ask', err, ASK_USAGE, io);
  }
  const params = {
    query: positionals.join(' ').trim(),
    site: (values.site ?? [])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean),
    ...(values.mode ? { mode: values.mode.toLowerCase() } : {}),
    ...(maxResults !== undefined ? { maxResults } : {}),
    prev: values.prev ?? [],
    ...(values['conversation-id'] ? { conversationId: values['conversation-id'] } : {}),
  };

  const printer = new AnswerPrinter(io);
  let errors = 0;
  const onMessage = values.json
    ? (m: NlwebMessage) => {
        if (m.message_type === 'error') errors += 1;
        io.out(JSON.stringify(m) + '\n');
      }
    : (m: NlwebMessage) => printer.message(m);
  try {
    const { ended } = await streamAsk(base, params, onMessage, io.signal, apiKey);
    printer.finish();
    if (!ended) {
      io.err('askbus ask: the answer was cut off: the connection closed before the end of the answer\n');
      return 1;
    }
    return errors + printer.errors > 0 ? 1 : 0;
  } catch (err) {
    if (io.signal?.aborted) {
      io.err('askbus ask: stopped\n');
      return 130;
    }
    return failure('ask', err, io, values.json);
  }
}

function parseAskArgs(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        site: { type: 'string', short: 's', multiple: true },
        mode: { type: 'string', short: 'm' },
        max: { type: 'string', short: 'n' },
        prev: { type: 'string', multiple: true },
        'conversation-id': { type: 'string' },
        json: { type: 'boolean' },
        url: { type: 'string' },
        'api-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `askbus sites`; returns the exit status. */
export async function runSites(argv: string[], io: Io): Promise<number> {
  let json = false;
  let base: string;
  let apiKey: string | undefined;
  try {
    let values;
    try {
      ({ values } = parseArgs({
        args: argv,
        options: {
          json: { type: 'boolean' },
          url: { type: 'string' },
          'api-key': { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
      }));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (values.help) {
      io.out(SITES_USAGE);
      return 0;
    }
    json = Boolean(values.json);
    base = gatewayUrl(values.url, io.env);
    apiKey = apiKeyOf(values['api-key'], io.env);
  } catch (err) {
    return usageFailure('sites', err, SITES_USAGE, io);
  }
  try {
    const body = await fetchSites(base, io.signal, apiKey);
    if (json) {
      io.out(JSON.stringify(body) + '\n');
      return 0;
    }
    const rows = (body.details ?? body.sites.map((name) => ({ name }))).map((d) => [
      clean(d.name),
      'itemCount' in d && typeof d.itemCount === 'number' ? String(d.itemCount) : '',
      'types' in d && Array.isArray(d.types) ? clean(d.types.join(', ')) : '',
    ]);
    if (rows.length === 0) {
      io.out('No sites are loaded.\n');
      return 0;
    }
    const table = [['SITE', 'ITEMS', 'TYPES'], ...rows];
    const w0 = Math.max(...table.map((r) => r[0]!.length));
    const w1 = Math.max(...table.map((r) => r[1]!.length));
    io.out(
      table.map((r) => `${r[0]!.padEnd(w0)}  ${r[1]!.padStart(w1)}  ${r[2]}`.trimEnd()).join('\n') + '\n',
    );
    return 0;
  } catch (err) {
    return failure('sites', err, io, json);
  }
}

function usageFailure(command: string, err: unknown, usage: string, io: Io): number {
  if (!(err instanceof UsageError)) throw err;
  io.err(`askbus ${command}: ${err.message}\n\n${usage}`);
  return 2;
}

/** Prints a failure: on stderr for people; with --json also as an error message on stdout. */
function failure(command: string, err: unknown, io: Io, json: boolean | undefined): number {
  const message = err instanceof Error ? err.message : String(err);
  if (json) {
    const body =
      err instanceof HttpError && err.body
        ? { message_type: 'error', ...err.body, status: err.status }
        : {
            message_type: 'error',
            error: message,
            code: err instanceof HttpError ? 'http' : 'unreachable',
            ...(err instanceof HttpError ? { status: err.status } : {}),
          };
    io.out(JSON.stringify(body) + '\n');
  }
  io.err(`askbus ${command}: ${message}\n`);
  return 1;
}

/** Runs `ask` or `sites` as the process: Ctrl-C stops the answer (the gateway sees the hang-up). */
export async function runClientCommand(command: 'ask' | 'sites', argv: string[]): Promise<number> {
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const io = processIo(controller.signal);
    return await (command === 'ask' ? runAsk(argv, io) : runSites(argv, io));
  } finally {
    process.off('SIGINT', onSigint);
  }
}
