/**
 * Who may publish and subscribe to what on NATS, per askbus service: the one source of truth for
 * the nats-server authorization of every deployment (deploy/nats/values.yaml is checked against
 * it). Each service lists the contracts it serves and calls; the subjects follow from those
 * contract objects, plus what every bus needs (cancellation, $SRV discovery, reply inboxes).
 */
import type { z } from 'zod';
import {
  CANCEL_PREFIX,
  contracts,
  eventContracts,
  toolContracts,
  type Contract,
  type EventContract,
} from '@askbus/contracts';

/** The gateway's A2A task store buckets (services/gateway/src/a2a/store.ts; a test keeps them equal). */
export const A2A_KV_BUCKETS = ['askbus_a2a_tasks', 'askbus_a2a_push'] as const;
/** The gateway's conversation store (services/gateway/src/conversations/store.ts; a test keeps it equal). */
export const CONVERSATIONS_KV_BUCKET = 'askbus_conversations';

interface ServiceSubjects {
  /** Contracts it answers: subscribe (in a queue group). */
  serves: readonly Contract[];
  /** Contracts it calls: publish. */
  calls: readonly Contract[];
  /** JetStream KV buckets it creates, reads and writes. */
  kvBuckets?: readonly string[];
  /** Event contracts it publishes and hears (every key: `<subject>.*`). */
  events?: readonly EventContract<z.ZodType>[];
}

const { ask, search, upsert, sites, delete: del, score, profile, names, items } = contracts;

/** Every NATS user: the services of services/ by name, and `loader` for `askbus load`. */
export const serviceSubjects = {
  // Gateway replicas share A2A task events and cancel requests (services/gateway/src/a2a/replicas.ts).
  gateway: {
    serves: [],
    calls: [ask, sites, search, profile, names, items],
    kvBuckets: [...A2A_KV_BUCKETS, CONVERSATIONS_KV_BUCKET],
    events: [eventContracts.a2aTaskEvents, eventContracts.a2aCancelTask],
  },
  // Tool selection may dispatch to any tool handler of config/tools.xml.
  router: {
    serves: [ask],
    calls: [sites, search, score, profile, names, items, ...Object.values(toolContracts)],
  },
  retriever: { serves: [search, upsert, sites, del, profile, names, items], calls: [] },
  ranker: { serves: [score], calls: [] },
  'tool-details': { serves: [toolContracts.details], calls: [search, names, items] },
  'tool-compare': { serves: [toolContracts.compare], calls: [search, names, items] },
  'tool-ensemble': { serves: [toolContracts.ensemble], calls: [search, score] },
  'tool-recipe': {
    serves: [toolContracts.recipe_substitutions, toolContracts.accompaniment],
    calls: [search, score],
  },
  'tool-who': { serves: [toolContracts.who], calls: [sites, search, score] },
  loader: { serves: [], calls: [sites, upsert, del] },
} as const satisfies Record<string, ServiceSubjects>;

export type NatsUser = keyof typeof serviceSubjects;
export const NATS_USERS = Object.keys(serviceSubjects) as NatsUser[];

/**
 * The permissions block of one nats-server user, as the server config spells it. There is no
 * `allow_responses`: it would let a user publish to any reply subject of a message it received,
 * and nats-server (2.9 and 2.10) applies no `deny` rule to such a response, so a caller naming
 * `$JS.API.…` or another service's subject as its reply made a responder publish there; and a
 * user that both publishes and hears a subject (every caller and `ask.v1.cancel`) could echo a
 * message to itself and so publish anywhere. Responses go to the callers' inboxes instead,
 * allowed by name (see responseInboxes).
 */
export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/** The reply-inbox prefix of a NATS user: `_INBOX_<user>` (connectBus uses it). */
export const userInboxPrefix = (user: string): string => `_INBOX_${user}`;

/**
 * Replies go to `_INBOX_<user>.<random>` (connectBus sets the prefix from the NATS user), so a
 * user reads its own replies and no one else's.
 */
const inboxOf = (user: NatsUser): string => `${userInboxPrefix(user)}.>`;
/** Every process hears every cancel; each user publishes only cancels that name it. */
const ALL_CANCELS = `${CANCEL_PREFIX}.>`;
const cancelsOf = (user: NatsUser): string => `${CANCEL_PREFIX}.${user}.>`;
/** Every bus answers ADR-32 discovery ($SRV.PING|INFO|STATS[.name[.id]]). */
const DISCOVERY = '$SRV.>';

/** The users that call `contract`. */
export function callersOf(contract: Contract): NatsUser[] {
  return NATS_USERS.filter((u) =>
    (serviceSubjects[u].calls as readonly Contract[]).some((c) => c.subject === contract.subject),
  );
}

/**
 * Where a user may answer: the inboxes of the users that call what it serves (any number of
 * chunks and heartbeats, for as long as a call lasts). Nothing else, whatever reply subject a
 * request names; the bus refuses a reply that is not an inbox before NATS would (reply-inbox.ts).
 */
export function responseInboxes(user: NatsUser): string[] {
  const s: ServiceSubjects = serviceSubjects[user];
  return unique(s.serves.flatMap(callersOf).map(inboxOf));
}

/**
 * JetStream API subjects of one KV bucket (stream KV_<bucket>): create and inspect the stream,
 * direct gets, and the ordered consumers of key listings and watches, whose flow-control
 * requests the client answers on $JS.FC.<stream>.>; writes go to $KV.<bucket>.>. The API's
 * replies come to the inbox.
 */
function kvSubjects(bucket: string): string[] {
  const stream = `KV_${bucket}`;
  return [
    `$JS.API.STREAM.*.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.*.${stream}`,
    `$JS.API.CONSUMER.*.${stream}.>`,
    `$JS.FC.${stream}.>`,
    `$KV.${bucket}.>`,
  ];
}

/** The permissions of one service's NATS user, derived from the contracts it serves and calls. */
export function natsPermissions(user: NatsUser): NatsPermissions {
  const s: ServiceSubjects = serviceSubjects[user];
  const calls = s.calls.map((c) => c.subject);
  const buckets = s.kvBuckets ?? [];
  const events = (s.events ?? []).map((c) => `${c.subject}.*`);
  const publish = [
    ...calls,
    // A caller cancels what it started (timeouts, aborts, a consumer that stops reading), under
    // its own name only: the receivers stop only calls it made or queries it started.
    ...(calls.length > 0 ? [cancelsOf(user)] : []),
    ...responseInboxes(user),
    ...(buckets.length > 0 ? ['$JS.API.INFO'] : []),
    ...buckets.flatMap(kvSubjects),
    ...events,
  ];
  const subscribe = [
    ...s.serves.map((c) => c.subject),
    // Every process hears every cancel and aborts its own work for that query.
    ALL_CANCELS,
    DISCOVERY,
    ...events,
    // Replies to calls, JetStream API replies and KV key listings all arrive on inboxes.
    ...(calls.length > 0 || buckets.length > 0 ? [inboxOf(user)] : []),
  ];
  return {
    publish: { allow: unique(publish) },
    subscribe: { allow: unique(subscribe) },
  };
}

/** Every user's permissions, by user. */
export function allNatsPermissions(): Record<NatsUser, NatsPermissions> {
  return Object.fromEntries(NATS_USERS.map((u) => [u, natsPermissions(u)])) as Record<
    NatsUser,
    NatsPermissions
  >;
}

/** The environment variable that holds a user's password in a rendered config: NATS_PASSWORD_TOOL_DETAILS. */
export const passwordEnvVar = (user: NatsUser): string =>
  `NATS_PASSWORD_${user.toUpperCase().replaceAll('-', '_')}`;

const unique = (xs: string[]): string[] => [...new Set(xs)];
