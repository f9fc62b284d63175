import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  detectFormat,
  isLoadableName,
  loadCsv,
  loadFeed,
  loadHtml,
  loadJson,
  loadJsonLines,
  loadTsv,
  peek,
  type Format,
} from './formats';
import type { IngestEvent, IngestOptions } from './items';

export interface LoadOptions extends IngestOptions {
  /** Force a format instead of detecting it. */
  format?: Format;
}

/** Items (and per-record errors) of one byte stream; the format from `name` and the first bytes. */
export async function* loadStream(
  input: Readable,
  name: string,
  opts: LoadOptions,
  pageUrl?: string,
): AsyncGenerator<IngestEvent> {
  const { head, stream } = await peek(input);
  const format = opts.format ?? detectFormat(name, head);
  switch (format) {
    case 'tsv':
      yield* loadTsv(stream, name, opts);
      break;
    case 'jsonl':
      yield* loadJsonLines(stream, name, opts);
      break;
    case 'json':
      yield* loadJson(stream, name, opts, head);
      break;
    case 'csv':
      yield* loadCsv(stream, name, opts);
      break;
    case 'html':
      yield* loadHtml(stream, name, opts, pageUrl);
      break;
    case 'feed':
      yield* loadFeed(stream, name, opts);
      break;
  }
}

/** Every loadable file under a directory, sorted, hidden files and folders left out. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(p)));
    else if (e.isFile() && isLoadableName(e.name)) out.push(p);
  }
  return out;
}

/** Items of a file, or of every loadable file of a directory (recursively). */
export async function* loadPath(path: string, opts: LoadOptions): AsyncGenerator<IngestEvent> {
  const s = await stat(path);
  const files = s.isDirectory() ? await listFiles(path) : [path];
  for (const file of files) {
    // HTML files without a canonical link get a file: URL, stable for re-loads from the same place
    yield* loadStream(createReadStream(file), file, opts, `file://${file}`);
  }
}

/** Items of an http(s) URL, streamed as it downloads. Other schemes are refused. */
export async function* loadUrl(
  url: string,
  opts: LoadOptions & { fetch?: typeof fetch; signal?: AbortSignal },
): AsyncGenerator<IngestEvent> {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`only http(s) URLs can be loaded, not ${u.protocol}`);
  const res = await (opts.fetch ?? fetch)(url, opts.signal ? { signal: opts.signal } : {});
  if (!res.ok || !res.body) throw new Error(`GET ${url}: HTTP ${res.status}`);
  const ctype = res.headers.get('content-type') ?? '';
  let format = opts.format;
  if (!format) {
    if (/json-seq|ndjson|jsonl/i.test(ctype)) format = 'jsonl';
    else if (/text\/csv/i.test(ctype)) format = 'csv';
    else if (/(rss|atom)\+xml/i.test(ctype)) format = 'feed';
  }
  const body = Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
  yield* loadStream(body, url, format ? { ...opts, format } : opts, url);
}

/** A file, a directory or an http(s) URL. */
export function loadSource(source: string, opts: LoadOptions): AsyncGenerator<IngestEvent> {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(source) ? loadUrl(source, opts) : loadPath(source, opts);
}
