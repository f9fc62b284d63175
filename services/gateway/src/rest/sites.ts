/** REST /sites (the loaded sites, their profiles in brief) and /sites/<name> (a site's profile). */
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import type { SiteInfo, SiteProfile } from '@askbus/contracts';
import { RETRIEVER, traceparentFrom } from '../ask/runner';
import { failureOf } from '../errors';
import { pendingHeaders } from '../http';
import { SSE_HEADERS, sseFrame } from '../render';

export interface SitesRouteOptions {
  bus: Bus;
  /** Time limit of the retriever's answer (ms). */
  timeoutMs: number;
}

const truthy = (v: unknown): boolean =>
  ['true', '1', 'yes'].includes(
    String(Array.isArray(v) ? v[0] : (v ?? ''))
      .trim()
      .toLowerCase(),
  );

export async function sitesRoutes(app: FastifyInstance, opts: SitesRouteOptions): Promise<void> {
  app.get('/sites', async (req, reply) => {
    let sites: SiteInfo[];
    try {
      ({ sites } = await opts.bus.request(
        contracts.sites,
        {},
        { timeoutMs: opts.timeoutMs, traceparent: traceparentFrom(req.headers.traceparent) },
      ));
    } catch (err) {
      const f = failureOf(err, RETRIEVER);
      return reply.code(f.status).send({ message_type: 'error', ...f });
    }
    // each site's profile in brief (properties, kinds, units, ranges, common values); the whole
    // profile is at /sites/<name>. A retriever that cannot say leaves the details as they were.
    const profiles = await opts.bus
      .request(
        contracts.profile,
        { site: ['all'], known: {} },
        { timeoutMs: opts.timeoutMs, traceparent: traceparentFrom(req.headers.traceparent) },
      )
      .then(
        (r) => new Map(r.profiles.filter((p) => !('unchanged' in p)).map((p) => [p.site, p as SiteProfile])),
      )
      .catch(() => new Map<string, SiteProfile>());
    const details = sites.map((s) => {
      const p = profiles.get(s.name);
      return p ? { ...s, mainTypes: p.mainTypes, properties: p.properties.map(briefProperty) } : s;
    });
    const body = { 'message-type': 'sites', sites: sites.map((s) => s.name), details };
    if (!truthy((req.query as Record<string, unknown>).streaming)) return body;
    reply.hijack();
    reply.raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS });
    reply.raw.end(sseFrame(body));
    return reply;
  });

  // A site's profile: what askbus learned of its items (properties, kinds, units, ranges, values).
  app.get('/sites/:name', async (req, reply) => {
    const name = (req.params as { name?: unknown }).name;
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(name)) {
      return reply.code(400).send({
        message_type: 'error',
        error: 'a site name is letters, digits, "_", "." or "-"',
        code: 'bad_request',
      });
    }
    try {
      const { profiles } = await opts.bus.request(
        contracts.profile,
        { site: [name], known: {} },
        { timeoutMs: opts.timeoutMs, traceparent: traceparentFrom(req.headers.traceparent) },
      );
      const profile = profiles.find((p) => p.site === name);
      if (!profile || 'unchanged' in profile) {
        return reply
          .code(404)
          .send({ message_type: 'error', error: `no site "${name}" is loaded`, code: 'not_found' });
      }
      return { 'message-type': 'site', site: name, profile };
    } catch (err) {
      const f = failureOf(err, RETRIEVER);
      return reply.code(f.status).send({ message_type: 'error', ...f });
    }
  });
}

/** A property of a site's profile in brief, for /sites. */
function briefProperty(p: SiteProfile['properties'][number]): Record<string, unknown> {
  return {
    path: p.path,
    label: p.label,
    kind: p.kind,
    count: p.count,
    // numbers and ranges in the canonical unit (grams, minutes, USD); the site writes displayUnit
    ...(p.unit ? { unit: p.unit } : {}),
    ...(p.displayUnit ? { displayUnit: p.displayUnit } : {}),
    ...(p.min !== undefined ? { min: p.min, max: p.max } : {}),
    ...(p.values?.length ? { values: p.values.slice(0, 10).map((v) => v.value), distinct: p.distinct } : {}),
  };
}
