/**
 * Fastify's own JSON body parser, kept as it is, except that a body it cannot parse is
 * remembered, so that the answer can be in the dialect the client meant (a broken 0.5 body is
 * answered with a 0.5 failure, see v05-detect.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

const unparsed = new WeakMap<FastifyRequest, string>();

/** Wraps the app's application/json parser; call before routes are registered. */
export function rememberUnparsableJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body.toString();
    parse(req, text, (err, value) => {
      if (err) unparsed.set(req, text);
      done(err, value);
    });
  });
}

/** The text of a request's JSON body that could not be parsed, if it was that. */
export function unparsableJsonOf(req: FastifyRequest): string | undefined {
  return unparsed.get(req);
}
