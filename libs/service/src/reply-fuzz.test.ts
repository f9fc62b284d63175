/**
 * Reply-subject fuzzing, property-based: every NATS user of the generated authorization sends
 * requests to every served subject with reply subjects of every kind (its own inbox, other
 * users' inboxes, plain _INBOX, JetStream and KV API subjects, other services' subjects,
 * wildcards, garbage), and a user that may read everything watches what follows.
 *
 * The property: an answer goes only to the reply subject named, only when that is an inbox of a
 * user that calls the responding service (NATS allows no other; the caller's own inbox then
 * always gets its answer); any other reply is refused by the bus (counted) or the request by
 * NATS, and nothing at all is published elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { PermissionViolationError, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Bus } from '@askbus/bus';
import { BusError } from '@askbus/bus';
import { startNatsServer, type NatsServerHandle } from '@askbus/bus';
import { passwordEnvVar, userInboxPrefix, type NatsUser } from '@askbus/bus';
import { renderNatsAuthConfig } from '@askbus/bus';
import { checkReply } from '@askbus/bus';
import { connectBus } from '@askbus/bus';
import type { Contract } from '@askbus/contracts';
import { loadSystem } from './system';

// The whole system's principals, as the services declare them.
const auth = (await loadSystem()).authorization;
const NATS_USERS = auth.users;
const natsPermissions = (user: string) => auth.permissions(user);
const responseInboxes = (user: string) => auth.responseInboxes(user);
const serviceSubjects: Record<
  string,
  { serves: readonly Contract[]; calls: readonly Contract[] } | undefined
> = Object.fromEntries(
  auth.principals.map((p) => [p.name, { serves: p.serves, calls: auth.callsOf(p.name) }]),
);

const PATIENCE = { timeout: 15_000, interval: 5 };
// nats-server parses a $VARIABLE's value as config: a password must start with a letter.
const SPY_PASSWORD = `p${randomBytes(18).toString('hex')}`;
const passwords = Object.fromEntries(
  NATS_USERS.map((u) => [u, `p${randomBytes(18).toString('hex')}`]),
) as Record<NatsUser, string>;

/** Every served subject, the user and bus that serve it; $SRV, which no user may request. */
const served = new Map<string, { user: NatsUser | undefined; bus: Bus | undefined }>();
const callers = new Map<NatsUser, { nc: NatsConnection; refused: string[] }>();
const seen: Msg[] = [];
let server: NatsServerHandle;
let spy: NatsConnection;
const buses: Bus[] = [];

/** The generated authorization plus a user that may read every subject and publish none. */
function withSpy(config: string): string {
  const at = config.lastIndexOf('  ]');
  const spyUser = [
    '    {',
    '      user: "spy"',
    `      password: "${SPY_PASSWORD}"`,
    '      permissions: { publish: { allow: [] }, subscribe: { allow: [">"] } }',
    '    }',
    '',
  ].join('\n');
  return config.slice(0, at) + spyUser + config.slice(at);
}

beforeAll(async () => {
  server = await startNatsServer({
    config: withSpy(renderNatsAuthConfig(auth)),
    env: Object.fromEntries(NATS_USERS.map((u) => [passwordEnvVar(u), passwords[u]!])),
  });
  spy = await connect({ servers: server.url, user: 'spy', pass: SPY_PASSWORD });
  spy.subscribe('>', { callback: (_e, m) => void seen.push(m) });
  await spy.flush();
  for (const user of NATS_USERS) {
    const contracts = serviceSubjects[user]!.serves as readonly Contract[];
    if (contracts.length > 0) {
      const bus = await connectBus({
        servers: server.url,
        service: user,
        user,
        pass: passwords[user],
        log: () => undefined,
      });
      buses.push(bus);
      for (const c of contracts) {
        // Answers at once: a unary error reply, or a stream's end marker.
        if (c.kind === 'unary')
          bus.serve(c, async () => {
            throw new BusError('not_found', 'fuzz');
          });
        else bus.serveStream(c, async function* () {});
        served.set(c.subject, { user, bus });
      }
      await bus.nc.flush();
    }
    const nc = await connect({
      servers: server.url,
      user,
      pass: passwords[user],
      inboxPrefix: userInboxPrefix(user),
    });
    const refused: string[] = [];
    void (async () => {
      for await (const s of nc.status())
        if (s.type === 'error' && s.error instanceof PermissionViolationError) refused.push(s.error.subject);
    })();
    callers.set(user, { nc, refused });
  }
  served.set('$SRV.PING', { user: undefined, bus: undefined });
  served.set('$SRV.INFO.retriever', { user: undefined, bus: undefined });
}, 60_000);

afterAll(async () => {
  for (const { nc } of callers.values()) await nc.close();
  for (const b of buses) await b.drain(500);
  await spy?.close();
  await server?.stop();
});

const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const someUser = fc.constantFrom<string>(...NATS_USERS, 'spy', 'nobody', '_');
const dangerous = fc.constantFrom(
  '$JS.API.STREAM.PURGE.KV_askbus_a2a_tasks',
  '$JS.API.STREAM.DELETE.KV_askbus_a2a_push',
  '$JS.API.CONSUMER.CREATE.KV_askbus_a2a_tasks',
  '$JS.FC.KV_askbus_a2a_tasks.x.y',
  '$KV.askbus_a2a_tasks.kX.kY.kZ',
  '$KV.askbus_a2a_push.k1',
  'ask.v1.run',
  'ask.v1.cancel.gateway.q1',
  'retrieve.v1.upsert',
  'retrieve.v1.delete',
  'rank.v1.score',
  'tool.v1.details.run',
  'a2a.v1.events.t1',
  'a2a.v1.cancel.t1',
  '$SRV.PING',
  '_INBOX',
  '_INBOX.>',
  '_INBOX_gateway',
  '_INBOX_gateway.*',
  '_INBOX_gateway.>',
  '_INBOX_router..x',
);
const subjectLike = fc
  .array(fc.oneof(token, fc.constantFrom('*', '>', '$JS', '$KV', 'API', '_INBOX', '_INBOX_router', '')), {
    minLength: 1,
    maxLength: 6,
  })
  .map((ts) => ts.join('.'));

const mayCall = (user: NatsUser): string[] =>
  [...served.keys()].filter((s) => natsPermissions(user).publish.allow.includes(s));
const sample = fc.constantFrom(...NATS_USERS).chain((user) =>
  fc.record({
    user: fc.constant(user),
    // Mostly subjects it may call (the bus's check is then what decides), the others too.
    subject: mayCall(user).length
      ? fc.oneof(
          { arbitrary: fc.constantFrom(...mayCall(user)), weight: 3 },
          { arbitrary: fc.constantFrom(...served.keys()), weight: 1 },
        )
      : fc.constantFrom(...served.keys()),
    reply: fc.oneof(
      token.map((t) => `${userInboxPrefix(user)}.${t}`),
      fc.tuple(someUser, token).map(([u, t]) => `_INBOX_${u}.${t}`),
      token.map((t) => `_INBOX.${t}`),
      dangerous,
      subjectLike,
      fc.stringMatching(/^[!-~]{1,40}$/),
    ),
  }),
);

it("answers only on inboxes of the responder's callers, for every user, subject and reply", async () => {
  const outcomes = { answered: 0, refusedByBus: 0, refusedByNats: 0 };
  await fc.assert(
    fc.asyncProperty(sample, async ({ user, subject, reply }) => {
      const caller = callers.get(user)!;
      const target = served.get(subject)!;
      const mayPublish = natsPermissions(user).publish.allow.includes(subject);
      const verdict = checkReply(reply, true);
      const inboxUser = verdict.ok ? verdict.caller : undefined;
      const reachable =
        inboxUser !== undefined &&
        target.user !== undefined &&
        responseInboxes(target.user).includes(`${userInboxPrefix(inboxUser)}.>`);
      const from = seen.length;
      const bus = target.bus;
      const before = bus && {
        refused: bus.stats.refusedReplies,
        handled: bus.stats.served + bus.stats.failed,
      };

      caller.nc.publish(subject, new TextEncoder().encode('{}'), { reply });
      await caller.nc.flush();
      if (mayPublish && bus && before) {
        await vi.waitFor(
          () =>
            expect(
              bus.stats.refusedReplies > before.refused ||
                bus.stats.served + bus.stats.failed > before.handled,
            ).toBe(true),
          PATIENCE,
        );
        await bus.nc.flush(); // whatever it published is at the server now
      }
      await spy.flush();
      const after = seen.slice(from);
      const requests = after.filter((m) => m.subject === subject && m.reply === reply);
      const others = after.filter((m) => !(m.subject === subject && m.reply === reply));

      expect(requests.length, 'the request itself').toBe(mayPublish ? 1 : 0);
      // Nothing but the reply subject, and that only when it is an inbox of a caller of the subject.
      for (const m of others) expect(m.subject, `${user} → ${subject} reply ${reply}`).toBe(reply);
      if (others.length > 0) expect(reachable, `${reply} answered`).toBe(true);
      if (!mayPublish) {
        expect(caller.refused.at(-1)).toBe(subject);
        outcomes.refusedByNats++;
      } else if (!verdict.ok) {
        expect(bus!.stats.refusedReplies).toBe(before!.refused + 1);
        expect(others).toEqual([]);
        outcomes.refusedByBus++;
      } else if (reachable) {
        // The answer arrives (and to the caller itself when the inbox is its own).
        expect(others.length).toBeGreaterThan(0);
        outcomes.answered++;
      }
    }),
    { numRuns: 1_000 },
  );
  // Every outcome was exercised, so the property was not met by refusing everything.
  expect(outcomes.answered).toBeGreaterThan(10);
  expect(outcomes.refusedByBus).toBeGreaterThan(10);
  expect(outcomes.refusedByNats).toBeGreaterThan(10);
}, 120_000);
