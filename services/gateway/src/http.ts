/** Small helpers for responses the gateway writes to the raw socket (SSE, refused upgrades). */
import { STATUS_CODES } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** Headers fastify would have sent (CORS and the like), for responses written to the raw socket. */
export function pendingHeaders(reply: FastifyReply): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) out[k] = v;
  return out;
}

/** Writes to a raw response, waiting while its buffer is full; a closed response swallows writes. */
export function writer(raw: ServerResponse): (chunk: string | Uint8Array) => Promise<void> {
  return async (chunk) => {
    if (chunk.length === 0 || raw.destroyed || raw.writableEnded) return;
    if (raw.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.on('drain', done);
      raw.on('close', done);
    });
  };
}

/** A JSON-RPC error with no id (a request that could not be read or was refused), as JSON text. */
export const rpcError = (code: number, message: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });

/** Refuses a WebSocket upgrade: an HTTP response with a JSON body on the raw socket, then closed. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: string,
  extra: Record<string, unknown> = {},
): void {
  if (!socket.writable) return void socket.destroy();
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(extra).map(([k, v]) => `${k}: ${String(v)}`),
  ];
  socket.once('finish', () => socket.destroy());
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
