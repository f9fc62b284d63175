/** Harness of the hardening suites: a real NATS, the fake router, retriever and search, a gateway. */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from '../index';
import type { GatewayOptions } from '../index';
import { serveFakeRetriever, serveFakeRouter, serveFakeSearch } from '../testing';
import type { FakeRouter } from '../testing';

export interface World {
  app: FastifyInstance;
  /** http://127.0.0.1:<port> once `listen()` ran. */
  base: string;
  router: FakeRouter;
  stop(): Promise<void>;
}

/** One fixed seed for every property of the hardening suites, so that runs are reproducible. */
export const SEED = 20261202;

/** Queries the fake router treats specially (fail, or wait until cancelled): kept out of fuzzing. */
const SPECIAL = new Set(['fail', 'hang', 'slow', 'idle']);
export const isSpecialQuery = (v: unknown): boolean => typeof v === 'string' && SPECIAL.has(v.trim());

export async function startWorld(opts: GatewayOptions = {}, listen = false): Promise<World> {
  const nats = await testNats();
  const buses: Bus[] = await Promise.all([
    testBus(nats.url, 'router'),
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'gateway'),
  ]);
  const [routerBus, retrieverBus, gatewayBus] = buses as [Bus, Bus, Bus];
  const router = serveFakeRouter(routerBus);
  serveFakeRetriever(retrieverBus);
  serveFakeSearch(retrieverBus);
  await routerBus.nc.flush();
  await retrieverBus.nc.flush();
  const app = await buildGateway(gatewayBus, {
    keepAliveMs: 1_000,
    askTimeoutMs: 5_000,
    version: '9.9.9',
    ...opts,
  });
  let base = '';
  if (listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }
  return {
    app,
    base,
    router,
    async stop() {
      await app.close();
      await Promise.all(buses.map((b) => b.drain()));
      await nats.stop();
    },
  };
}

export async function expectHealthy(app: FastifyInstance): Promise<void> {
  const res = await app.inject({ method: 'GET', url: '/health' });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toMatchObject({ status: 'healthy' });
}

export type ErrorForm = 'nlweb' | 'v05';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a body is a 4xx in NLWeb 2025's form: {message_type:"error", code, error, parameter?}. */
export function isNlwebError(body: unknown): boolean {
  return (
    isRecord(body) &&
    body.message_type === 'error' &&
    typeof body.code === 'string' &&
    typeof body.error === 'string' &&
    (body.parameter === undefined || typeof body.parameter === 'string')
  );
}

/** Whether a body is a 0.5 failure: {_meta:{error:{code, message}}, content:[{type:"text"}]} (v05.ts). */
export function isV05Error(body: unknown): boolean {
  return (
    isRecord(body) &&
    isRecord(body._meta) &&
    isRecord(body._meta.error) &&
    typeof body._meta.error.code === 'string' &&
    typeof body._meta.error.message === 'string' &&
    Array.isArray(body.content) &&
    body.content.some((c) => isRecord(c) && c.type === 'text')
  );
}

/**
 * The REST properties: a status under 500, and a 4xx body that is JSON in `form` (either form
 * when `form` is undefined: the dialect could not be known).
 */
export function expectRestAnswer(
  res: LightMyRequestResponse,
  form: ErrorForm | undefined,
  what: string,
): void {
  if (res.statusCode >= 500) throw new Error(`${what}: status ${res.statusCode}: ${res.body.slice(0, 300)}`);
  if (res.statusCode < 400) return;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    throw new Error(`${what}: a ${res.statusCode} whose body is not JSON: ${res.body.slice(0, 200)}`);
  }
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const ok =
    form === 'nlweb'
      ? isNlwebError(body)
      : form === 'v05'
        ? isV05Error(body)
        : isNlwebError(body) || isV05Error(body);
  if (!ok)
    throw new Error(
      `${what}: a ${res.statusCode} not in the ${form ?? 'any'} error form: ${res.body.slice(0, 300)}`,
    );
}
