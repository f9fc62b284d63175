/**
 * A small HTTP client of a running gateway, for the `ask` and `sites` commands: builds /ask
 * URLs and reads the SSE answer one NLWeb message at a time as it streams.
 */

import { notedGatewayUrl } from './data-dir';

export const DEFAULT_URL = 'http://127.0.0.1:8000';

/**
 * The gateway's base URL: --url, else ASKBUS_URL, else the one a running `askbus up` noted in
 * its data folder, else the default; without a trailing slash.
 */
export function gatewayUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const raw = (flag ?? env.ASKBUS_URL ?? '').trim() || notedGatewayUrl(env) || DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--url must be an http(s) URL, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * The API key to send (a gateway with access control requires one): --api-key, else
 * ASKBUS_API_KEY; undefined for none.
 */
export function apiKeyOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = (flag ?? env.ASKBUS_API_KEY ?? '').trim();
  if (key === '') return undefined;
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError('--api-key (or ASKBUS_API_KEY) must be printable ASCII without spaces');
  }
  return key;
}

/** A mistake in the command line: exit code 2 and the command's usage. */
export class UsageError extends Error {}

/** The gateway answered with an HTTP error; `body` is its JSON body when it had one. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown> | undefined,
    text: string,
  ) {
    const hint = status === 401 ? ' (give an API key: --api-key or ASKBUS_API_KEY)' : '';
    super(
      `the gateway answered HTTP ${status}: ${typeof body?.error === 'string' ? body.error : text.slice(0, 300)}${hint}`,
    );
  }
}

/** The gateway could not be reached at all. */
export class UnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    const why = cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : '';
    super(
      `cannot reach the gateway at ${url}${why ? ` (${why})` : ''}; is \`askbus up\` running? (--url or ASKBUS_URL)`,
    );
  }
}

export type NlwebMessage = Record<string, unknown> & { message_type?: string };

/** Incremental SSE parsing: `data:` lines of each event joined; comments and other fields dropped. */
export class SseParser {
  private buffer = '';

  push(chunk: string): string[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const out: string[] = [];
    let at: number;
    while ((at = this.buffer.indexOf('\n\n')) >= 0) {
      out.push(...this.block(this.buffer.slice(0, at)));
      this.buffer = this.buffer.slice(at + 2);
    }
    return out;
  }

  flush(): string[] {
    const rest = this.buffer;
    this.buffer = '';
    return rest.trim() ? this.block(rest) : [];
  }

  private block(block: string): string[] {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    return data.length ? [data.join('\n')] : [];
  }
}

/** How a call reaches the gateway: a signal to stop it, the API key to send. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  apiKey?: string | undefined;
}

async function get(
  url: string,
  base: string,
  { signal, apiKey }: CallOptions = {},
  accept = 'application/json',
): Promise<Response> {
  let res: Response;
  const headers: Record<string, string> = { accept };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  try {
    res = await fetch(url, { headers, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new UnreachableError(base, err);
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        body = parsed as Record<string, unknown>;
    } catch {
      // not JSON
    }
    throw new HttpError(res.status, body, text || res.statusText);
  }
  return res;
}

export interface AskParams {
  query: string;
  site?: string[];
  mode?: string;
  maxResults?: number;
  prev?: string[];
  conversationId?: string;
}

export function askUrl(base: string, p: AskParams): string {
  const q = new URLSearchParams({ query: p.query, streaming: 'true' });
  if (p.site?.length) q.set('site', p.site.join(','));
  if (p.mode) q.set('mode', p.mode);
  if (p.maxResults !== undefined) q.set('max_results', String(p.maxResults));
  if (p.prev?.length) q.set('prev', JSON.stringify(p.prev));
  if (p.conversationId) q.set('conversation_id', p.conversationId);
  return `${base}/ask?${q}`;
}

/**
 * Streams an answer: calls `onMessage` for each message as it arrives. Resolves with whether
 * the stream had its end-nlweb-response (false: the connection closed early).
 */
export async function streamAsk(
  base: string,
  p: AskParams,
  onMessage: (m: NlwebMessage) => void,
  signal?: AbortSignal,
  apiKey?: string,
): Promise<{ ended: boolean }> {
  const res = await get(askUrl(base, p), base, { signal, apiKey }, 'text/event-stream');
  if (!res.body) return { ended: false };
  const parser = new SseParser();
  const decoder = new TextDecoder();
  let ended = false;
  const deliver = (datas: string[]): void => {
    for (const d of datas) {
      let m: unknown;
      try {
        m = JSON.parse(d);
      } catch {
        continue;
      }
      if (!m || typeof m !== 'object') continue;
      onMessage(m as NlwebMessage);
      if ((m as NlwebMessage).message_type === 'end-nlweb-response') ended = true;
    }
  };
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      deliver(parser.push(decoder.decode(chunk, { stream: true })));
    }
  } catch (err) {
    if (signal?.aborted) throw err;
    // A connection cut mid-stream: what arrived stands, the answer is incomplete.
    return { ended };
  }
  deliver(parser.push(decoder.decode()));
  deliver(parser.flush());
  return { ended };
}

export interface SitesBody {
  'message-type'?: string;
  sites: string[];
  details?: { name: string; itemCount?: number; types?: string[] }[];
}

export async function fetchSites(base: string, signal?: AbortSignal, apiKey?: string): Promise<SitesBody> {
  const res = await get(`${base}/sites?streaming=false`, base, { signal, apiKey });
  return (await res.json()) as SitesBody;
}
