/**
 * Conversations in one durable store (NATS JetStream KV, bucket CONVERSATIONS_BUCKET): NLWeb's
 * `conversation_id` on /ask, the chat API's conversations (/chat/ws, /chat/sse) and A2A's
 * `contextId` all record their turns here. A turn reserves its place when the question is asked
 * (so a follow-up sent at once already sees it) and stores the answer's messages when it ends.
 * The questions asked before feed the next question's `prev`; the chat API replays the turns.
 * Keys are scoped by the API-key client (or '' when no keys are configured), so one client never
 * reads another's conversations.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Message } from '@askbus/contracts';
import type { ResultItem } from '@askbus/contracts';
import type { ConversationKv } from './kv';

/** The JetStream KV bucket (libs/bus permissions list it for the gateway's NATS user). */
export const CONVERSATIONS_BUCKET = 'askbus_conversations';

/** Earlier questions a follow-up gets as `prev` (NLWeb's page keeps 10). */
export const MAX_PREV = 10;
/** Turns a conversation keeps for its history (NLWeb replays 50). */
export const MAX_TURNS = 50;
/** A stored turn's size limit: NATS' default max payload is 1 MiB. */
const MAX_TURN_BYTES = 256 * 1024;
const MAX_PARTICIPANTS = 20;
const UPDATE_ATTEMPTS = 10;

/** The question of a turn, with who asked it (the chat API's sender, else ''). */
export const UserTurn = z.object({
  messageId: z.string(),
  query: z.string(),
  site: z.array(z.string()),
  mode: z.string(),
  senderId: z.string(),
  senderName: z.string(),
  timestamp: z.string(),
});
export type UserTurn = z.infer<typeof UserTurn>;

const ConversationMeta = z.object({
  id: z.string(),
  title: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  site: z.array(z.string()),
  mode: z.string(),
  /** The number of the next turn; turns are 0, 1, 2, … */
  next: z.number().int().min(0),
  /** The last MAX_PREV questions, oldest first. */
  queries: z.array(z.string()),
  participants: z.array(z.string()),
});
export type ConversationMeta = z.infer<typeof ConversationMeta>;

const StoredTurn = z.object({
  seq: z.number().int().min(0),
  user: UserTurn,
  messages: z.array(z.unknown()),
});

export interface Turn {
  seq: number;
  user: UserTurn;
  /** The router's messages of the answer (its chunks and progress left out). */
  messages: Message[];
}

export interface ConversationHistory {
  meta: ConversationMeta;
  turns: Turn[];
}

/** A turn in progress: the questions asked before it, and how to store its answer. */
export interface OpenTurn {
  prev: string[];
  finish(messages: readonly Message[]): Promise<void>;
}

/** One key token: base64url (KV-safe) behind a letter, so that '' is a token too. */
const tok = (s: string): string => `k${Buffer.from(s, 'utf8').toString('base64url')}`;
const metaKey = (scope: string, id: string): string => `m.${tok(scope)}.${tok(id)}`;
const turnKey = (scope: string, id: string, seq: number): string => `t.${tok(scope)}.${tok(id)}.${seq}`;

/** Messages worth replaying: not the streamed chunks, progress notes or debug messages. */
const KEPT = (m: Message): boolean =>
  !['summary_chunk', 'nlws_chunk', 'status', 'tool_selection', 'retrieval_count'].includes(m.message_type);

/** A schema.org object cut to what a page shows of it, for turns too large to keep whole. */
function slim(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['@type', 'name', 'url', 'image', 'description']) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

const slimItem = (i: ResultItem): ResultItem => ({ ...i, schema_object: slim(i.schema_object) });

/** The messages of a turn as stored: whole when they fit, else with slimmed schema.org objects. */
function storable(messages: readonly Message[]): Message[] {
  const kept = messages.filter(KEPT);
  if (JSON.stringify(kept).length <= MAX_TURN_BYTES) return kept;
  const slimmed = kept.map((m): Message => {
    if (m.message_type === 'result' && Array.isArray(m.content))
      return { ...m, content: m.content.map(slimItem) };
    if (m.message_type === 'nlws') return { ...m, items: m.items.map(slimItem) };
    return m;
  });
  if (JSON.stringify(slimmed).length <= MAX_TURN_BYTES) return slimmed;
  return slimmed.filter((m) => m.message_type !== 'result' || !Array.isArray(m.content)).slice(0, 100);
}

function parseJson<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

export class ConversationStore {
  /** `whyNotDurable`: the error that made the gateway keep conversations in memory. */
  constructor(
    private readonly kv: ConversationKv,
    readonly whyNotDurable?: unknown,
  ) {}

  /** Whether conversations survive a restart (JetStream) or live in this process only. */
  get durable(): boolean {
    return this.kv.durable;
  }

  /**
   * Starts a turn of conversation `id`: records its question (creating the conversation when
   * new) and returns the questions asked before. Concurrent turns (two gateways, two tabs)
   * each get their own number: the update is conditional on the revision read.
   */
  async begin(scope: string, id: string, user: UserTurn): Promise<OpenTurn> {
    const key = metaKey(scope, id);
    let lastError: unknown;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const current = await this.kv.get(key);
      const meta = current ? parseJson(ConversationMeta, current.text) : undefined;
      const seq = meta?.next ?? 0;
      const prev = meta?.queries ?? [];
      const participants = meta?.participants ?? [];
      const next: ConversationMeta = {
        id,
        title: meta?.title ?? user.query.slice(0, 50),
        created_at: meta?.created_at ?? user.timestamp,
        updated_at: user.timestamp,
        site: user.site,
        mode: user.mode,
        next: seq + 1,
        queries: [...prev, user.query].slice(-MAX_PREV),
        participants:
          user.senderId === '' || participants.includes(user.senderId)
            ? participants
            : [...participants, user.senderId].slice(-MAX_PARTICIPANTS),
      };
      try {
        if (current) await this.kv.update(key, JSON.stringify(next), current.revision);
        else await this.kv.create(key, JSON.stringify(next));
      } catch (err) {
        lastError = err; // another turn wrote first: read again
        continue;
      }
      return {
        prev,
        finish: async (messages) => {
          const turn = { seq, user, messages: storable(messages) };
          await this.kv.put(turnKey(scope, id, seq), JSON.stringify(turn));
          if (seq >= MAX_TURNS) await this.kv.delete(turnKey(scope, id, seq - MAX_TURNS));
        },
      };
    }
    throw lastError instanceof Error ? lastError : new Error('the conversation could not be updated');
  }

  /** The questions asked so far in a conversation (oldest first), without starting a turn. */
  async queries(scope: string, id: string): Promise<string[]> {
    const current = await this.kv.get(metaKey(scope, id));
    return (current && parseJson(ConversationMeta, current.text)?.queries) ?? [];
  }

  /** A conversation's last MAX_TURNS finished turns, oldest first; undefined when unknown. */
  async history(scope: string, id: string): Promise<ConversationHistory | undefined> {
    const current = await this.kv.get(metaKey(scope, id));
    const meta = current ? parseJson(ConversationMeta, current.text) : undefined;
    if (!meta) return undefined;
    const seqs: number[] = [];
    for (let s = Math.max(0, meta.next - MAX_TURNS); s < meta.next; s++) seqs.push(s);
    const turns = await Promise.all(
      seqs.map(async (s): Promise<Turn | undefined> => {
        const v = await this.kv.get(turnKey(scope, id, s));
        const t = v ? parseJson(StoredTurn, v.text) : undefined;
        if (!t) return undefined;
        const messages = t.messages.flatMap((m) => {
          const r = Message.safeParse(m);
          return r.success ? [r.data] : [];
        });
        return { seq: t.seq, user: t.user, messages };
      }),
    );
    return { meta, turns: turns.filter((t): t is Turn => t !== undefined) };
  }

  /** The scope's conversations, newest first; with `participant`, only those they took part in. */
  async list(scope: string, participant?: string): Promise<ConversationMeta[]> {
    const keys = await this.kv.keys(`m.${tok(scope)}.*`);
    const metas = await Promise.all(
      keys.map(async (k) => {
        const v = await this.kv.get(k);
        return v ? parseJson(ConversationMeta, v.text) : undefined;
      }),
    );
    return metas
      .filter((m): m is ConversationMeta => m !== undefined)
      .filter((m) => participant === undefined || m.participants.includes(participant))
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at));
  }
}

/** A UserTurn for a question that came without the chat API's envelope (/ask, A2A). */
export function userTurn(query: string, site: string[], mode: string, senderId = ''): UserTurn {
  return {
    messageId: `msg_${randomUUID().replaceAll('-', '')}`,
    query,
    site,
    mode,
    senderId,
    senderName: senderId,
    timestamp: new Date().toISOString(),
  };
}
