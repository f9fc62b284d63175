/**
 * REST /ask in protocol 0.5 (detected and parsed in dialect.ts, rendered by v05.ts): the I/O of
 * its answer: one JSON body, or SSE events as the router's messages
 * arrive. The SSE head is written with the first event, so a failure before it (no router, a
 * time-out) still gets its HTTP status and a Failure body.
 */
import type { FastifyReply } from 'fastify';
import type { AskCall } from '../dialect';
import { pendingHeaders, writer } from '../http';
import { KEEPALIVE, SSE_HEADERS } from '../render';
import { V05Collector, V05Stream, v05FailureOf } from '../v05';
import type { Pump } from './pump';

export async function answerV05(
  call: AskCall,
  reply: FastifyReply,
  pump: Pump,
  keepAliveMs: number,
): Promise<FastifyReply> {
  const queryId = call.request.queryId;
  if (!call.streaming) {
    const collector = new V05Collector(call);
    const { failure } = await pump((m) => collector.add(m));
    const { status, body } = collector.result(failure);
    return reply.header('x-query-id', queryId).code(status).send(body);
  }

  const raw = reply.raw;
  const renderer = new V05Stream(call);
  const write = writer(raw);
  raw.on('error', (err) => reply.log.debug({ err }, 'SSE response failed'));
  reply.hijack();
  let headed = false;
  const head = (): void => {
    if (headed || raw.headersSent) return;
    headed = true;
    raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS, 'x-query-id': queryId });
    raw.flushHeaders();
  };
  const keepalive = setInterval(() => {
    head();
    void write(KEEPALIVE);
  }, keepAliveMs);
  try {
    const { failure, clientGone } = await pump((m) => {
      const out = renderer.render(m);
      if (!out) return;
      head();
      return write(out);
    });
    if (clientGone) return reply;
    if (failure && !headed) {
      raw.writeHead(failure.status, {
        ...pendingHeaders(reply),
        'content-type': 'application/json; charset=utf-8',
        'x-query-id': queryId,
      });
      raw.end(JSON.stringify(v05FailureOf(call, failure)));
      return reply;
    }
    head();
    await write(failure ? renderer.fail(failure) : renderer.finish());
    return reply;
  } finally {
    clearInterval(keepalive);
    if (!raw.destroyed && !raw.writableEnded) raw.end();
  }
}
