/**
 * Which reply subjects a bus answers on. nats-server lets a responder publish to whatever reply
 * subject a request names, so a service that answered anything would publish for its caller on
 * subjects the caller may not touch ($JS.API purges, $KV writes, other services' requests).
 * A bus therefore answers only on inboxes, of the shape connectBus gives them:
 *
 * - `_INBOX_<user>.<token>[.<token>…]`: the inbox of NATS user `<user>`, always;
 * - `_INBOX.<token>[.<token>…]`: nats.js's default inbox, only on a bus that runs without a NATS
 *   user (a NATS without users, or with a token or creds file), where callers use it.
 *
 * A reply without wildcards or empty tokens, nothing else. Which users' inboxes a responder may
 * reach at all is NATS's part (permissions.ts: the inboxes of the subject's callers).
 */
import { ANONYMOUS_CALLER, SubjectToken } from '@askbus/contracts';

/** One token of a subject that can be published to: no dots, wildcards or whitespace. */
const TOKEN = '[^.*>\\s]+';
const USER_INBOX = new RegExp(`^_INBOX_([A-Za-z0-9_-]{1,100})(?:\\.${TOKEN})+$`);
const PLAIN_INBOX = new RegExp(`^_INBOX(?:\\.${TOKEN})+$`);

export type ReplyVerdict =
  { ok: true; reply: string; caller: string } | { ok: false; reason: (typeof REFUSED)[keyof typeof REFUSED] };

const REFUSED = {
  none: 'it has no reply subject',
  notInbox: 'its reply subject is not an inbox',
  plain: 'its reply subject is a plain _INBOX and this bus runs as a NATS user',
} as const;

/**
 * Whether a bus may answer on `reply`, and the caller it names: the user of `_INBOX_<user>.…`,
 * or ANONYMOUS_CALLER for a plain `_INBOX.…`. `withUsers`: the bus runs as a NATS user.
 */
export function checkReply(reply: string | undefined, withUsers: boolean): ReplyVerdict {
  if (!reply) return { ok: false, reason: REFUSED.none };
  const user = USER_INBOX.exec(reply)?.[1];
  if (user !== undefined && user !== ANONYMOUS_CALLER) return { ok: true, reply, caller: user };
  if (PLAIN_INBOX.test(reply)) {
    return withUsers ? { ok: false, reason: REFUSED.plain } : { ok: true, reply, caller: ANONYMOUS_CALLER };
  }
  return { ok: false, reason: REFUSED.notInbox };
}

/** A NATS user name askbus can build inboxes and cancel subjects from (one subject token). */
export function checkUserName(user: string): string {
  if (!SubjectToken.safeParse(user).success || user === ANONYMOUS_CALLER) {
    throw new Error(
      `NATS user "${user}" cannot name an inbox (_INBOX_<user>) or a cancel subject: use 1-100 of A-Z a-z 0-9 _ - (not "_" alone)`,
    );
  }
  return user;
}
