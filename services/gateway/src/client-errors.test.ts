/**
 * Requests Node's HTTP parser refuses (client-errors.ts): a control character in a header, a
 * header block over the limit, a broken request line. Each is answered in the error form of the
 * surface it was sent to, over a raw TCP socket since no HTTP client sends such requests.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestPathOf } from './client-errors';
import { startWorld } from './hardening/world';
import type { World } from './hardening/world';

let world: World;
beforeAll(async () => {
  world = await startWorld({}, true);
});
afterAll(async () => {
  await world?.stop();
});

/** Sends raw bytes; resolves with the status, headers and body the server wrote before closing. */
function raw(bytes: string): Promise<{ status: number; head: string; body: unknown }> {
  const port = Number(new URL(world.base).port);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    socket.on('data', (c: Buffer) => parts.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = body;
      }
      resolve({ status, head, body: parsed });
    });
    socket.end(Buffer.from(bytes, 'latin1'));
  });
}

const request = (path: string, header: string): string =>
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${header}\r\n\r\n`;

describe('requests Node refuses are answered in the surface’s error form', () => {
  it('a control character in a header: NLWeb error, JSON-RPC (MCP, A2A), google.rpc.Status (A2A REST), chat', async () => {
    const bad = 'X-Bad: a\x01b';
    const rest = await raw(request('/ask?query=x', bad));
    expect(rest.status).toBe(400);
    expect(rest.head).toMatch(/content-type: application\/json/i);
    expect(rest.body).toMatchObject({
      message_type: 'error',
      code: 'bad_request',
      error: expect.stringMatching(/header/),
    });

    for (const path of ['/mcp', '/a2a']) {
      const r = await raw(request(path, bad));
      expect(r.status, path).toBe(400);
      expect(r.body, path).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    }

    const a2aRest = await raw(request('/a2a/rest/v1/tasks', bad));
    expect(a2aRest.status).toBe(400);
    expect(a2aRest.head).toMatch(/content-type: application\/a2a\+json/i);
    expect(a2aRest.body).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });

    const chat = await raw(request('/chat/sse?message=x', bad));
    expect(chat.body).toMatchObject({ type: 'error', code: 400 });
  });

  it('headers over the size limit are a 431, and a broken request line a 400, in the same forms', async () => {
    const big = await raw(request('/a2a/rest/v1/tasks', `X-Big: ${'a'.repeat(20_000)}`));
    expect(big.status).toBe(431);
    expect(big.body).toMatchObject({ error: { code: 431 } });
    const line = await raw('GET /ask?query=x HTTP/1.1 nonsense\r\n\r\n');
    expect(line.status).toBe(400);
    expect(line.body).toMatchObject({ message_type: 'error', code: 'bad_request' });
  });

  it('the server keeps answering', async () => {
    expect((await fetch(`${world.base}/health`)).status).toBe(200);
  });

  it('reads the path of a request line, absolute or not', () => {
    expect(requestPathOf(Buffer.from('POST /a2a/rest/v1/tasks?x=1 HTTP/1.1\r\nHost: a\r\n'))).toBe(
      '/a2a/rest/v1/tasks',
    );
    expect(requestPathOf(Buffer.from('GET http://h:1/mcp HTTP/1.1\r\n'))).toBe('/mcp');
    expect(requestPathOf(Buffer.from('\x00\x01garbage'))).toBe('');
    expect(requestPathOf(undefined)).toBe('');
  });
});
