/**
 * Node's HTTP request and response around the MCP SDK's web-standard transport, so that the
 * gateway sees the SDK's answer as a fetch Response (to add a batch's per-element errors) before
 * it is written.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writer } from '../http';
import type { RpcErrorAnswer } from './envelope';

/** The request as a fetch Request, without its body (the SDK gets the body parsed). */
export function webRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  let url: URL;
  try {
    url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  } catch {
    url = new URL(req.url ?? '/', 'http://localhost');
  }
  return new Request(url, { method: req.method ?? 'POST', headers });
}

/** Writes a fetch Response; a client that hangs up cancels the body (the SDK ends its stream). */
export async function writeResponse(res: Response, raw: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  raw.writeHead(res.status, headers);
  if (!res.body) {
    raw.end();
    return;
  }
  raw.flushHeaders();
  const reader = res.body.getReader();
  const write = writer(raw);
  const cancel = (): void => void reader.cancel().catch(() => undefined);
  raw.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || raw.destroyed) break;
      await write(value);
    }
  } finally {
    raw.off('close', cancel);
    if (!raw.writableEnded) raw.end();
  }
}

const sseEvent = (message: unknown): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * A batch's answer: the SDK's answers to its valid messages and `errors` for its invalid ones, as
 * one JSON array (also when there is one answer) or, on an SSE stream, as events before the SDK's.
 * A refusal of the whole request (not 2xx) stays as it is.
 */
export async function withBatchErrors(res: Response, errors: RpcErrorAnswer[]): Promise<Response> {
  if (res.status < 200 || res.status > 299) return res;
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  const type = headers.get('content-type') ?? '';
  if (res.status === 202 || /^application\/json/i.test(type)) {
    const text = res.status === 202 ? '' : await res.text();
    if (text === '' && errors.length === 0) return new Response(null, { status: res.status, headers });
    const answers: unknown = text === '' ? [] : JSON.parse(text);
    headers.set('content-type', 'application/json');
    const all = [...(Array.isArray(answers) ? answers : [answers]), ...errors];
    return new Response(JSON.stringify(all), { status: 200, headers });
  }
  if (!/^text\/event-stream/i.test(type) || !res.body || errors.length === 0) return res;
  const reader = res.body.getReader();
  const first = new TextEncoder().encode(errors.map(sseEvent).join(''));
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => controller.enqueue(first),
    pull: async (controller) => {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: res.status, headers });
}
