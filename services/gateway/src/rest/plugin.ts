/**
 * REST: /ask in every dialect (dialect.ts detects and parses; nlweb.ts and v05.ts answer),
 * /who (who.ts), /sites (sites.ts). Its access rules: every REST path is the `rest` surface;
 * a refusal of POST /ask takes the form its body's dialect reads, of POST /who protocol 0.5's.
 */
import type { FastifyInstance } from 'fastify';
import type { AccessControl } from '../access';
import { traceparentFrom } from '../ask/runner';
import { parseAsk } from '../dialect';
import { collectNlweb, streamNlweb } from './nlweb';
import { restPump } from './pump';
import type { PumpDeps } from './pump';
import { sitesRoutes } from './sites';
import { answerV05 } from './v05';
import { whoRoutes } from './who';

export interface RestOptions extends PumpDeps {
  access: AccessControl;
  /** Interval of `: keepalive` comments on SSE responses (ms). */
  keepAliveMs: number;
  /** Time limit of /sites and /who on the bus (ms). */
  sitesTimeoutMs: number;
}

export async function restPlugin(app: FastifyInstance, opts: RestOptions): Promise<void> {
  opts.access.addRule((method, path) => {
    if (method === 'POST' && path === '/ask') return { surface: 'rest', form: 'ask-post' };
    // POST /who takes only protocol 0.5 WhoRequests.
    if (method === 'POST' && path === '/who') return { surface: 'rest', form: 'v05' };
    return undefined;
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/ask',
    exposeHeadRoute: false,
    handler: async (req, reply) => {
      const call = parseAsk({ query: req.query, body: req.body, accept: req.headers.accept });
      const pump = restPump(opts, call, traceparentFrom(req.headers.traceparent), reply.raw);
      if (call.dialect === 'v05') return answerV05(call, reply, pump, opts.keepAliveMs);
      if (!call.streaming) return collectNlweb(call, reply, pump);
      return streamNlweb(call, req, reply, pump, opts.keepAliveMs);
    },
  });

  await sitesRoutes(app, { bus: opts.bus, timeoutMs: opts.sitesTimeoutMs });
  await whoRoutes(app, {
    bus: opts.bus,
    traceparentOf: (req) => traceparentFrom(req.headers.traceparent),
    timeoutMs: opts.sitesTimeoutMs,
  });
}
