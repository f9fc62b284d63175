import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { contracts, type StoredItem } from '@askbus/contracts';
import { Bus } from './bus';
import { freePort, startNatsServer, type NatsServerHandle } from './nats-server';
import { perItemScore } from './testing';

// A NATS restart on the same address, as in production: every connection reconnects on its own
// timer. The caller's comes back within ~0.1 s of the server, the responder's only after
// RESPONDER_RECONNECT_MS, which leaves a window in which the caller is connected and nobody
// serves the subject. Without the bus's resend rules a request sent in that window (or while the
// caller is still disconnected) fails with no_responders or is silently dropped by nats.js and
// waits out its 15 s limit.

const RESPONDER_RECONNECT_MS = 4_000;
/** The call's own limit: a dropped request would fail with deadline_exceeded after this. */
const CALL_LIMIT_MS = 15_000;
/**
 * How soon after the responder is back the answer must have come. Loose on purpose (a loaded
 * 2-core machine); it only has to be far below CALL_LIMIT_MS.
 */
const ANSWER_WITHIN_MS = 5_000;

const item = (n: number): StoredItem => ({
  url: `https://example.test/${n}`,
  name: `Item ${n}`,
  site: 'test',
  '@type': 'Thing',
  schema_object: { '@type': 'Thing', name: `Item ${n}` },
});

let port: number;
let nats: NatsServerHandle;
let responder: Bus;
let caller: Bus;
let siteCalls = 0;
let scoreCalls = 0;

async function busOn(service: string, reconnectTimeWait: number): Promise<Bus> {
  const nc: NatsConnection = await connect({
    servers: nats.url,
    maxReconnectAttempts: -1,
    reconnectTimeWait,
    reconnectJitter: 0,
  });
  return new Bus(nc, { service, heartbeatMs: 200 });
}

/** Resolves at the next status event of `type` of `nc`, with the time it happened. */
function nextStatus(nc: NatsConnection, type: 'disconnect' | 'reconnect'): Promise<number> {
  return (async () => {
    for await (const s of nc.status()) if (s.type === type) return Date.now();
    throw new Error('the connection closed');
  })();
}
const nextReconnect = (nc: NatsConnection) => nextStatus(nc, 'reconnect');

beforeAll(async () => {
  port = await freePort();
  nats = await startNatsServer({ port });
  responder = await busOn('svc', RESPONDER_RECONNECT_MS);
  caller = await busOn('client', 50);
  responder.serve(contracts.sites, async () => {
    siteCalls++;
    return { sites: [{ name: 'one', itemCount: 1, types: ['Thing'] }] };
  });
  responder.serveStream(perItemScore, async function* (req) {
    scoreCalls++;
    for (const it of req.items) yield { url: it.url, score: 70, description: 'ok' };
  });
  await responder.nc.flush();
}, 30_000);

afterAll(async () => {
  await Promise.all([caller?.drain(500), responder?.drain(500)]);
  await nats?.stop();
});

/**
 * Stops NATS and starts it again on the same port; `whileDown` runs in between, once the caller
 * has seen its connection drop.
 */
async function restartNats(whileDown: () => void = () => undefined) {
  const callerGone = nextStatus(caller.nc, 'disconnect');
  const callerBack = nextReconnect(caller.nc);
  const responderBack = nextReconnect(responder.nc);
  await nats.stop();
  await callerGone;
  whileDown();
  nats = await startNatsServer({ port });
  return { callerBack, responderBack };
}

describe('a request around a NATS restart', () => {
  it('sent while the caller is disconnected (nats.js drops it) is sent again and answered once', async () => {
    siteCalls = 0;
    let reply: Promise<unknown> | undefined;
    const sentAt = Date.now();
    const { callerBack, responderBack } = await restartNats(() => {
      reply = caller.request(contracts.sites, {}, { timeoutMs: CALL_LIMIT_MS });
    });
    const outcome = reply!.then(
      (r) => ({ r, at: Date.now() }),
      (err: unknown) => ({ err, at: Date.now() }),
    );
    const [callerAt, responderAt, result] = await Promise.all([callerBack, responderBack, outcome]);
    console.log(
      `sent while down: caller back after ${callerAt - sentAt} ms, responder after ${responderAt - sentAt} ms, ` +
        `answered after ${result.at - sentAt} ms`,
    );
    expect(result).toMatchObject({ r: { sites: [{ name: 'one' }] } });
    expect(result.at - responderAt).toBeLessThan(ANSWER_WITHIN_MS);
    expect(siteCalls).toBe(1);
  }, 40_000);

  it('sent after the caller reconnected but before the responder did waits for it, then streams', async () => {
    scoreCalls = 0;
    const { callerBack, responderBack } = await restartNats();
    await callerBack;
    let responderAt: number | undefined;
    void responderBack.then((at) => (responderAt = at));
    const sentAt = Date.now();
    const chunks: unknown[] = [];
    for await (const c of caller.stream(
      perItemScore,
      { query: 'q', items: [item(1), item(2)] },
      { timeoutMs: CALL_LIMIT_MS },
    )) {
      chunks.push(c);
    }
    const doneAt = Date.now();
    // The window was real: the responder was still away when the stream was sent.
    expect(responderAt).toBeGreaterThan(sentAt);
    console.log(
      `sent ${responderAt! - sentAt} ms before the responder was back; answered ${doneAt - responderAt!} ms after it`,
    );
    expect(chunks).toHaveLength(2);
    expect(doneAt - responderAt!).toBeLessThan(ANSWER_WITHIN_MS);
    expect(scoreCalls).toBe(1);
  }, 40_000);

  it('for a subject nobody serves still fails with no_responders when the grace period ends', async () => {
    const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    const bus = new Bus(nc, { service: 'short-grace', reconnectGraceMs: 1_000 });
    try {
      const back = nextReconnect(nc);
      await restartNats();
      await back;
      const started = Date.now();
      // Inside the grace period the call is sent again until the period ends, then reported:
      // not waited on for the call's whole limit.
      await expect(
        bus.request(contracts.delete, { site: 'x' }, { timeoutMs: CALL_LIMIT_MS }),
      ).rejects.toMatchObject({
        code: 'no_responders',
      });
      const tookMs = Date.now() - started;
      expect(tookMs).toBeLessThan(1_000 + ANSWER_WITHIN_MS);
      console.log(`no_responders after a reconnect reported after ${tookMs} ms (grace 1,000 ms)`);
    } finally {
      await bus.drain(200);
    }
  }, 40_000);
});
