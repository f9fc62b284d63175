/** Small helpers for responses the gateway writes to the raw socket (SSE). */
import type { ServerResponse } from 'node:http';
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
