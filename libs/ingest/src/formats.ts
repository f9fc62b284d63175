import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import { XMLParser } from 'fast-xml-parser';
import { StringDecoder } from 'node:string_decoder';
import { jsonParser } from 'stream-json/core/parser.js';
import { streamArray } from 'stream-json/core/streamers/stream-array.js';
import { htmlLinkedData } from './html';
import { isRecord, jsonLdEvents, nodeToItem, type IngestEvent, type IngestOptions } from './items';

export type Format = 'json' | 'jsonl' | 'tsv' | 'csv' | 'html' | 'feed';
export const FORMATS: readonly Format[] = ['json', 'jsonl', 'tsv', 'csv', 'html', 'feed'];

/** Whole-document formats (a JSON object, an HTML page, a feed) are read into memory up to this size. */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

const EXTENSIONS: Record<string, Format | 'sniff'> = {
  json: 'json',
  jsonld: 'json',
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  tsv: 'tsv',
  txt: 'sniff',
  csv: 'csv',
  html: 'html',
  htm: 'html',
  rss: 'feed',
  atom: 'feed',
  xml: 'sniff',
};

/** The extension of a file name or URL path, lowercase, without the dot ("" when none). */
export function extensionOf(name: string): string {
  const path = name.replace(/[?#].*$/, '');
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  return m ? m[1]!.toLowerCase() : '';
}

/** Whether a file name looks like something a loader reads (used when walking directories). */
export function isLoadableName(name: string): boolean {
  return Object.hasOwn(EXTENSIONS, extensionOf(name));
}

/**
 * The format of a file from its name and its first bytes: the extension decides when it is
 * unambiguous; `.txt`, `.xml` and unknown names are recognized by their content.
 */
export function detectFormat(name: string, head: string): Format {
  const ext = extensionOf(name);
  // own keys only: "data.constructor" must not find Object's constructor
  const byExt = Object.hasOwn(EXTENSIONS, ext) ? EXTENSIONS[ext] : undefined;
  if (byExt && byExt !== 'sniff') return byExt;
  return sniffFormat(head);
}

export function sniffFormat(head: string): Format {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('<')) {
    return /<(rss|feed|rdf:RDF)[\s>]/i.test(text.slice(0, 4096)) ? 'feed' : 'html';
  }
  const firstLine = text.split('\n', 1)[0] ?? '';
  if (/^[^\s\t]+\t\s*[[{]/.test(firstLine)) return 'tsv';
  if (text.startsWith('[')) return 'json';
  if (text.startsWith('{')) {
    // JSON lines: the first line is a whole object and another one follows
    try {
      JSON.parse(firstLine);
      return /\n\s*\{/.test(text) ? 'jsonl' : 'json';
    } catch {
      return 'json';
    }
  }
  return 'csv';
}

/** Reads the first `bytes` of a stream and gives back a stream that still has them. */
export async function peek(input: Readable, bytes = 8192): Promise<{ head: string; stream: Readable }> {
  const it = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    const b = typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    chunks.push(b);
    size += b.length;
  }
  const headBuf = Buffer.concat(chunks);
  async function* all(): AsyncGenerator<Buffer> {
    if (headBuf.length) yield headBuf;
    if (done) return;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield typeof r.value === 'string' ? Buffer.from(r.value) : r.value;
    }
  }
  // a cut multi-byte character at the end only spoils the sniffed text, not the data
  return {
    head: headBuf.subarray(0, bytes).toString('utf8'),
    stream: Readable.from(all(), { objectMode: false }),
  };
}

async function readAll(input: Readable, file: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of input as AsyncIterable<Buffer | string>) {
    const b = typeof c === 'string' ? Buffer.from(c) : c;
    size += b.length;
    if (size > MAX_DOCUMENT_BYTES)
      throw new Error(`${file} is over ${MAX_DOCUMENT_BYTES} bytes for a whole-document format`);
    chunks.push(b);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

const lines = (input: Readable) => createInterface({ input, crlfDelay: Infinity });

/** JSON.parse with its failure as a value (V8 parses any depth without recursion). */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/**
 * NLWeb's data files: `url<TAB>json` or `url<TAB>json<TAB>vector` per line; the JSON is one
 * schema.org object or an array of them (several items of one page); the vector (a JSON array
 * of numbers) is passed along with the item.
 */
export async function* loadTsv(
  input: Readable,
  file: string,
  opts: IngestOptions,
): AsyncGenerator<IngestEvent> {
  let line = 0;
  for await (const text of lines(input)) {
    line++;
    if (!text.trim()) continue;
    const tab = text.indexOf('\t');
    if (tab < 0) {
      yield { kind: 'error', error: { file, line, reason: 'no tab: expected url<TAB>json[<TAB>vector]' } };
      continue;
    }
    const url = text.slice(0, tab).trim();
    const rest = text.slice(tab + 1);
    const tab2 = rest.indexOf('\t');
    const jsonText = tab2 < 0 ? rest : rest.slice(0, tab2);
    let value: unknown;
    let vector: number[] | undefined;
    try {
      value = JSON.parse(jsonText);
      if (tab2 >= 0 && rest.slice(tab2 + 1).trim()) {
        const v: unknown = JSON.parse(rest.slice(tab2 + 1));
        if (!Array.isArray(v) || !v.every((x) => typeof x === 'number'))
          throw new Error('vector is not an array of numbers');
        vector = v as number[];
      }
    } catch (err) {
      yield { kind: 'error', error: { file, line, reason: `bad JSON: ${(err as Error).message}` } };
      continue;
    }
    // the first node without its own URL takes the line's URL; more of them get #2, #3 …
    for (const ev of jsonLdEvents(value, opts, { file, line }, url || undefined)) {
      yield ev.kind === 'item' && vector ? { ...ev, vector } : ev;
    }
  }
}

/** JSON lines: one schema.org object (or array, or @graph) per line. */
export async function* loadJsonLines(
  input: Readable,
  file: string,
  opts: IngestOptions,
): AsyncGenerator<IngestEvent> {
  let line = 0;
  for await (const text of lines(input)) {
    line++;
    if (!text.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { kind: 'error', error: { file, line, reason: `bad JSON: ${(err as Error).message}` } };
      continue;
    }
    yield* jsonLdEvents(value, opts, { file, line });
  }
}

/**
 * A JSON document: a top-level array is streamed element by element (stream-json), so a huge
 * export stays flat in memory; an object (one item or an `@graph`) is read whole.
 */
export async function* loadJson(
  input: Readable,
  file: string,
  opts: IngestOptions,
  head: string,
): AsyncGenerator<IngestEvent> {
  if (
    head
      .replace(/^\uFEFF/, '')
      .trimStart()
      .startsWith('[')
  ) {
    yield* loadJsonArray(input, file, opts);
    return;
  }
  const text = await readAll(input, file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    yield { kind: 'error', error: { file, line: 1, reason: `bad JSON: ${(err as Error).message}` } };
    return;
  }
  yield* jsonLdEvents(value, opts, { file, line: 1 });
}

// stream-json's core stages return `none` or `many([...])`, marked with these global symbols.
const NONE = Symbol.for('object-stream.none');
const MANY = Symbol.for('object-stream.many');
const valuesOf = <T>(out: unknown): T[] =>
  out === NONE ? [] : (out as { [MANY]?: number })[MANY] === 1 ? (out as { values: T[] }).values : [out as T];

/**
 * Pieces of text that end after each `,` `]` `}` and line break: an array element ends at one of
 * them, so the parser has emitted its tokens before it meets an error later in the same chunk (it
 * drops the tokens of a call that fails), and the line of a failing piece is known.
 */
function* pieces(text: string): Generator<string> {
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x0a) {
      yield text.slice(start, i + 1);
      start = i + 1;
    }
  }
  if (start < text.length) yield text.slice(start);
}

type Token = Parameters<ReturnType<typeof streamArray>>[0];

/**
 * A top-level JSON array, element by element, through stream-json's core tokenizer and array
 * streamer driven by hand: every element before a parse error comes out, then one error with
 * the number of the element and the line where the parser failed.
 */
async function* loadJsonArray(
  input: Readable,
  file: string,
  opts: IngestOptions,
): AsyncGenerator<IngestEvent> {
  const parse = jsonParser({ streamValues: false });
  const elements = streamArray();
  const decoder = new StringDecoder('utf8');
  let record = 0;
  let line = 1;
  /** The events of the elements that `text` completes (NONE: the end of the input). */
  function* feed(text: string | typeof NONE): Generator<IngestEvent> {
    for (const token of valuesOf<Token>(parse(text as string)))
      for (const { value } of valuesOf<{ value: unknown }>(elements(token))) {
        record++;
        yield* jsonLdEvents(value, opts, { file, record });
      }
  }
  function* feedText(text: string): Generator<IngestEvent> {
    for (const piece of pieces(text)) {
      yield* feed(piece);
      if (piece.endsWith('\n')) line++;
    }
  }
  try {
    let first = true;
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let text = decoder.write(chunk);
      if (first && text !== '') {
        text = text.replace(/^\uFEFF/, '');
        first = false;
      }
      yield* feedText(text);
    }
    yield* feedText(decoder.end());
    yield* feed(NONE);
  } catch (err) {
    yield {
      kind: 'error',
      error: {
        file,
        line,
        record: record + 1,
        reason: `bad JSON, rest of file skipped: ${(err as Error).message}`,
      },
    };
  } finally {
    input.destroy();
  }
}

/** Sets `a.b.c` in an object, so CSV columns like `author.name` become nested properties. */
function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  // a column "__proto__.x" would otherwise walk into Object.prototype and set x on every object
  if (parts.includes('__proto__')) return;
  let o = obj;
  for (const p of parts.slice(0, -1)) {
    if (!Object.hasOwn(o, p) || !isRecord(o[p])) o[p] = {};
    o = o[p] as Record<string, unknown>;
  }
  o[parts[parts.length - 1]!] = value;
}

const NUMERIC = /^-?\d+(\.\d+)?$/;

/** One parsed CSV row (csv-parse with `info`), or why a row or the rest of the file was skipped. */
type CsvEvent =
  | { kind: 'row'; record: Record<string, string>; line: number }
  | { kind: 'skip'; line?: number; reason: string };

/**
 * The rows of a CSV stream in order, every error in its place: a bad row (a stray quote, a
 * quote never closed) is skipped by csv-parse and reported, and the rows on either side are
 * kept. Read through events, not the stream's async iterator, which drops the rows it had
 * buffered when the stream fails.
 */
async function* csvRows(input: Readable): AsyncGenerator<CsvEvent> {
  const queue: CsvEvent[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const post = (e: CsvEvent): void => {
    queue.push(e);
    wake?.();
  };
  const parser = parseCsv({
    columns: true,
    info: true,
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    trim: true,
    skip_records_with_error: true,
    on_skip: (err) => {
      const line = typeof err?.lines === 'number' ? err.lines : undefined;
      post({
        kind: 'skip',
        ...(line !== undefined ? { line } : {}),
        reason: `bad CSV row: ${err?.message ?? 'unreadable'}`,
      });
      return undefined;
    },
  });
  parser.on('data', (r: { record: Record<string, string>; info: { lines: number } }) => {
    post({ kind: 'row', record: r.record, line: r.info.lines });
    if (queue.length > 1_000) parser.pause();
  });
  parser.on('error', (err: Error) => {
    post({ kind: 'skip', reason: `bad CSV, rest of file skipped: ${err.message}` });
    ended = true;
  });
  parser.on('end', () => {
    ended = true;
    wake?.();
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (ended) return;
      parser.resume();
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    input.unpipe(parser);
    parser.destroy();
    input.destroy();
  }
}

/**
 * CSV with a header row: each column is a schema.org property (`name`, `url`, `description`,
 * `author.name` …); a `@type` (or `type`) column gives the type, else `defaultType`; a file with
 * neither is one error, not a row of errors. Numbers become numbers; empty cells are left out.
 */
export async function* loadCsv(
  input: Readable,
  file: string,
  opts: IngestOptions,
): AsyncGenerator<IngestEvent> {
  let first = true;
  for await (const ev of csvRows(input)) {
    if (ev.kind === 'skip') {
      yield {
        kind: 'error',
        error: { file, ...(ev.line !== undefined ? { line: ev.line } : {}), reason: ev.reason },
      };
      continue;
    }
    if (first) {
      first = false;
      if (!opts.defaultType && !('@type' in ev.record) && !('type' in ev.record)) {
        yield {
          kind: 'error',
          error: {
            file,
            reason:
              'no @type column and no default type (say what the rows are with --type, e.g. --type Movie)',
          },
        };
        return;
      }
    }
    const node: Record<string, unknown> = {};
    for (const [key, cell] of Object.entries(ev.record)) {
      if (cell === undefined || cell === '') continue;
      const k = key === 'type' ? '@type' : key;
      setPath(node, k, NUMERIC.test(cell) && k !== 'name' ? Number(cell) : cell);
    }
    if (opts.defaultType && node['@type'] === undefined) node['@type'] = opts.defaultType;
    const r = nodeToItem(node, opts);
    if (typeof r === 'string') yield { kind: 'error', error: { file, line: ev.line, reason: r } };
    else
      yield {
        kind: 'item',
        item: { ...r, schema_object: { '@context': 'https://schema.org', ...r.schema_object } },
      };
  }
}

/**
 * The schema.org items an HTML page embeds in `<script type="application/ld+json">`; items
 * without a URL take the page's canonical URL, else `pageUrl`. Linear in the page (html.ts).
 */
export async function* loadHtml(
  input: Readable,
  file: string,
  opts: IngestOptions,
  pageUrl?: string,
): AsyncGenerator<IngestEvent> {
  const html = await readAll(input, file);
  const { scripts, canonical } = htmlLinkedData(html);
  const url = canonical ?? pageUrl;
  for (const s of scripts) {
    const value = parseJson(s.text.trim().replace(/^<!--|-->$/g, ''));
    if (!value.ok) {
      yield { kind: 'error', error: { file, line: s.line, reason: `bad JSON-LD: ${value.reason}` } };
      continue;
    }
    yield* jsonLdEvents(value.value, opts, { file, line: s.line }, url);
  }
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  isArray: (name) => ['item', 'entry', 'link', 'category', 'enclosure', 'author'].includes(name),
});

const text = (v: unknown): string | undefined => {
  if (typeof v === 'string') return v.trim() || undefined;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return text(v[0]);
  if (isRecord(v)) return text(v['#text']) ?? text(v.name);
  return undefined;
};
const strip = (html: string | undefined): string | undefined =>
  html
    ?.replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim() || undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

/**
 * RSS 2.0, RSS 1.0 (RDF) and Atom feeds: each item or entry a schema.org item — a
 * PodcastEpisode when it has an audio enclosure, else BlogPosting (Atom) or Article (RSS).
 */
export async function* loadFeed(
  input: Readable,
  file: string,
  opts: IngestOptions,
): AsyncGenerator<IngestEvent> {
  const source = await readAll(input, file);
  let doc: unknown;
  try {
    // fast-xml-parser throws on some broken XML ("<"): one error for the file, not an exception.
    doc = xml.parse(source);
  } catch (err) {
    yield { kind: 'error', error: { file, reason: `bad XML: ${(err as Error).message}` } };
    return;
  }
  if (!isRecord(doc)) return;
  const rss = isRecord(doc.rss) ? doc.rss : undefined;
  const rdf = isRecord(doc['rdf:RDF']) ? doc['rdf:RDF'] : undefined;
  const atom = isRecord(doc.feed) ? doc.feed : undefined;
  const channel =
    rss && isRecord(rss.channel) ? rss.channel : rdf && isRecord(rdf.channel) ? rdf.channel : undefined;
  const feedName = text(channel?.title) ?? text(atom?.title);
  const entries = list(atom ? atom.entry : rss ? channel?.item : rdf?.item);
  if (!rss && !rdf && !atom) {
    yield { kind: 'error', error: { file, reason: 'not an RSS or Atom feed' } };
    return;
  }
  let n = 0;
  for (const e of entries) {
    n++;
    if (!isRecord(e)) continue;
    const links = list(e.link);
    const link = atom
      ? (links.find((l) => isRecord(l) && (l['@_rel'] ?? 'alternate') === 'alternate') ?? links[0])
      : links[0];
    const url = (isRecord(link) ? text(link['@_href']) : text(link)) ?? text(e.guid) ?? text(e.id);
    const enclosure = list(e.enclosure).find((x) => isRecord(x)) as Record<string, unknown> | undefined;
    const audio = enclosure && /^audio\//i.test(String(enclosure['@_type'] ?? ''));
    const type = audio ? 'PodcastEpisode' : atom ? 'BlogPosting' : 'Article';
    const authors = list(e.author)
      .concat(list(e['dc:creator']))
      .map(text)
      .filter((a): a is string => !!a);
    const categories = list(e.category)
      .map((c) => (isRecord(c) ? (text(c['@_term']) ?? text(c)) : text(c)))
      .filter((c): c is string => !!c);
    const description = strip(
      text(e.description) ?? text(e.summary) ?? text(e['content:encoded']) ?? text(e.content),
    );
    const date = text(e.pubDate) ?? text(e.published) ?? text(e.updated) ?? text(e['dc:date']);
    const node: Record<string, unknown> = {
      '@context': 'https://schema.org',
      '@type': type,
      ...(url ? { url } : {}),
      ...(text(e.title)
        ? type === 'PodcastEpisode'
          ? { name: text(e.title) }
          : { headline: text(e.title), name: text(e.title) }
        : {}),
      ...(description ? { description } : {}),
      ...(date ? { datePublished: date } : {}),
      ...(authors.length ? { author: authors.map((name) => ({ '@type': 'Person', name })) } : {}),
      ...(categories.length ? { keywords: categories } : {}),
      ...(audio && enclosure
        ? {
            associatedMedia: {
              '@type': 'MediaObject',
              contentUrl: enclosure['@_url'],
              encodingFormat: enclosure['@_type'],
            },
          }
        : {}),
      ...(feedName ? { [type === 'PodcastEpisode' ? 'partOfSeries' : 'isPartOf']: { name: feedName } } : {}),
    };
    const r = nodeToItem(node, opts);
    if (typeof r === 'string') yield { kind: 'error', error: { file, record: n, reason: r } };
    else yield { kind: 'item', item: r };
  }
}
