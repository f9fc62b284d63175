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

const { ask, search, upsert, sites, delete: del, score } = contracts;

/** Every NATS user: the services of services/ by name, and `loader` for `askbus load`. */
export const serviceSubjects = {
  // Gateway replicas share A2A task events and cancel requests (services/gateway/src/a2a/replicas.ts).
  gateway: {
    serves: [],
    calls: [ask, sites, search],
    kvBuckets: A2A_KV_BUCKETS,
    events: [eventContracts.a2aTaskEvents, eventContracts.a2aCancelTask],
  },
  // Tool selection may dispatch to any tool handler of config/tools.xml.
  router: { serves: [ask], calls: [sites, search, score, ...Object.values(toolContracts)] },
  retriever: { serves: [search, upsert, sites, del], calls: [] },
  ranker: { serves: [score], calls: [] },
  'tool-details': { serves: [toolContracts.details], calls: [search] },
  'tool-compare': { serves: [toolContracts.compare], calls: [search] },
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

/** The permissions block of one nats-server user, as the server config spells it. */
export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
  allow_responses: { max: number; expires: string };
}

/** The reply-inbox prefix of a NATS user: `_INBOX_<user>` (connectBus uses it). */
export const userInboxPrefix = (user: string): string => `_INBOX_${user}`;

/**
 * Replies go to `_INBOX_<user>.<random>` (connectBus sets the prefix from the NATS user), so a
 * user reads its own replies and no one else's.
 */
const inboxOf = (user: NatsUser): string => `${userInboxPrefix(user)}.>`;
const CANCEL = `${CANCEL_PREFIX}.>`;
/** Every bus answers ADR-32 discovery ($SRV.PING|INFO|STATS[.name[.id]]). */
const DISCOVERY = '$SRV.>';

/**
 * A responder may publish to the reply subject of any request it received: unlimited messages
 * (a stream sends many chunks and heartbeats to one inbox; nats-server's default is one), for as
 * long as the longest call may run. Calls end by their deadline (60 s by default, and no caller
 * sets more), so 5 minutes leaves room; the server forgets a reply subject after that, which
 * keeps its table of them bounded.
 */
export const RESPONSE_PERMISSION = { max: -1, expires: '5m' } as const;

/**
 * JetStream API subjects of one KV bucket (stream KV_<bucket>): create and inspect the stream,
 * direct gets, and the ordered consumers of key listings; writes go to $KV.<bucket>.>.
 * The API's replies come to the inbox; flow control replies ride on allow_responses.
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
    // A caller cancels what it started (timeouts, aborts, a consumer that stops reading).
    ...(calls.length > 0 ? [CANCEL] : []),
    ...(buckets.length > 0 ? ['$JS.API.INFO'] : []),
    ...buckets.flatMap(kvSubjects),
    ...events,
  ];
  const subscribe = [
    ...s.serves.map((c) => c.subject),
    // Every process hears every cancel and aborts its own work for that query.
    CANCEL,
    DISCOVERY,
    ...events,
    // Replies to calls, JetStream API replies and KV key listings all arrive on inboxes.
    ...(calls.length > 0 || buckets.length > 0 ? [inboxOf(user)] : []),
  ];
  return {
    publish: { allow: unique(publish) },
    subscribe: { allow: unique(subscribe) },
    allow_responses: { ...RESPONSE_PERMISSION },
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
