/**
 * REST /ask in NLWeb's dialects (2025 messages, the May–Aug 2025 format of its pages, v0.55
 * named events; detected and parsed in dialect.ts, rendered by render.ts): the I/O of their
 * answers, streamed as SSE or collected into one JSON body.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createMessageFactory } from '@askbus/contracts';
import type { AskCall } from '../dialect';
import { pendingHeaders, writer } from '../http';
import { JsonCollector, KEEPALIVE, SSE_HEADERS, SseRenderer, errorBody } from '../render';
import type { Pump } from './pump';

export async function streamNlweb(
  call: AskCall,
  req: FastifyRequest,
  reply: FastifyReply,
  pump: Pump,
  keepAliveMs: number,
): Promise<FastifyReply> {
  const raw = reply.raw;
  const stamp = createMessageFactory(call.request.conversationId, `gateway-${call.request.queryId}`);
  const renderer = new SseRenderer(call, stamp);
  const write = writer(raw);
  raw.on('error', (err) => req.log.debug({ err }, 'SSE response failed'));
  reply.hijack();
  raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS, 'x-query-id': call.request.queryId });
  raw.flushHeaders();
  const keepalive = setInterval(() => void write(KEEPALIVE), keepAliveMs);
  try {
    const { failure, clientGone } = await pump((m) => write(renderer.render(m)));
    if (clientGone) return reply;
    await write(failure ? renderer.fail(failure) : renderer.finish());
    return reply;
  } finally {
    clearInterval(keepalive);
    if (!raw.destroyed && !raw.writableEnded) raw.end();
  }
}

export async function collectNlweb(call: AskCall, reply: FastifyReply, pump: Pump): Promise<FastifyReply> {
  const collector = new JsonCollector(call);
  const { failure } = await pump((m) => collector.add(m));
  reply.header('x-query-id', call.request.queryId);
  if (failure) return reply.code(failure.status).send(errorBody(call, failure));
  return reply.send(collector.body());
}
