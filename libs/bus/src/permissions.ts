/**
 * Who may publish and subscribe to what on NATS: derived from the declarations of the services
 * (services/<name>/src/service.ts, gathered by @askbus/service) and its clients, for the
 * nats-server authorization of every deployment (deploy/nats/values.yaml is rendered from it).
 * The subjects follow from the contract objects each one serves and calls, plus what every bus
 * needs (cancellation, $SRV discovery, reply inboxes).
 */
import type { z } from 'zod';
import {
  CANCEL_PREFIX,
  EVERY_TOOL,
  toolHandlerOf,
  type Contract,
  type EventContract,
  type EveryTool,
} from '@askbus/contracts';

/**
 * What one NATS user does on the bus: an askbus service as its declaration states it
 * (services/<name>/src/service.ts), or a client such as `askbus load`.
 */
export interface NatsPrincipal {
  readonly name: string;
  /** Contracts it answers: subscribe (in a queue group). */
  readonly serves: readonly Contract[];
  /** Contracts it calls: publish. EVERY_TOOL stands for every tool contract a principal serves. */
  readonly calls: readonly (Contract | EveryTool)[];
  /** JetStream KV buckets it creates, reads and writes. */
  readonly kvBuckets?: readonly string[];
  /** Event contracts it publishes and hears (every key: `<subject>.*`). */
  readonly events?: readonly EventContract<z.ZodType>[];
}

/** A NATS user's name: the name of a service or client declaration. */
export type NatsUser = string;

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

/**
 * The NATS authorization of a whole system: one user per principal, with permissions derived
 * from the contracts each serves and calls (nothing is listed twice).
 */
export class NatsAuthorization {
  private readonly byName: ReadonlyMap<string, NatsPrincipal>;

  constructor(readonly principals: readonly NatsPrincipal[]) {
    const byName = new Map<string, NatsPrincipal>();
    for (const p of principals) {
      if (!/^[a-z][a-z0-9-]{0,62}$/.test(p.name))
        throw new Error(`a NATS user name is lower case letters, digits and -, not "${p.name}"`);
      if (byName.has(p.name)) throw new Error(`two declarations are named "${p.name}"`);
      byName.set(p.name, p);
    }
    this.byName = byName;
  }

  /** Every user's name, in declaration order. */
  get users(): NatsUser[] {
    return this.principals.map((p) => p.name);
  }

  principal(user: NatsUser): NatsPrincipal {
    const p = this.byName.get(user);
    if (!p)
      throw new Error(`no service or client is declared as "${user}" (known: ${this.users.join(', ')})`);
    return p;
  }

  /** Every tool contract some principal serves. */
  toolContracts(): Contract[] {
    return this.principals.flatMap((p) => p.serves.filter((c) => toolHandlerOf(c.subject) !== undefined));
  }

  /** What a user calls, with EVERY_TOOL spelled out as the tools that are declared. */
  callsOf(user: NatsUser): Contract[] {
    return this.principal(user).calls.flatMap((c) =>
      c === EVERY_TOOL ? this.toolContracts() : [c as Contract],
    );
  }

  /** The users that call `contract`. */
  callersOf(contract: Contract): NatsUser[] {
    return this.users.filter((u) => this.callsOf(u).some((c) => c.subject === contract.subject));
  }

  /**
   * Where a user may answer: the inboxes of the users that call what it serves (any number of
   * chunks and heartbeats, for as long as a call lasts). Nothing else, whatever reply subject a
   * request names; the bus refuses a reply that is not an inbox before NATS would (reply-inbox.ts).
   */
  responseInboxes(user: NatsUser): string[] {
    return unique(
      this.principal(user)
        .serves.flatMap((c) => this.callersOf(c))
        .map(inboxOf),
    );
  }

  /** The permissions of one user, derived from the contracts it serves and calls. */
  permissions(user: NatsUser): NatsPermissions {
    const s = this.principal(user);
    const calls = this.callsOf(user).map((c) => c.subject);
    const buckets = s.kvBuckets ?? [];
    const events = (s.events ?? []).map((c) => `${c.subject}.*`);
    const publish = [
      ...calls,
      // A caller cancels what it started (timeouts, aborts, a consumer that stops reading), under
      // its own name only: the receivers stop only calls it made or queries it started.
      ...(calls.length > 0 ? [cancelsOf(user)] : []),
      ...this.responseInboxes(user),
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
  all(): Record<NatsUser, NatsPermissions> {
    return Object.fromEntries(this.users.map((u) => [u, this.permissions(u)]));
  }
}

/** The environment variable that holds a user's password in a rendered config: NATS_PASSWORD_TOOL_DETAILS. */
export const passwordEnvVar = (user: NatsUser): string =>
  `NATS_PASSWORD_${user.toUpperCase().replaceAll('-', '_')}`;

const unique = (xs: string[]): string[] => [...new Set(xs)];
