/**
 * The conversation store of a gateway, and the one way every surface runs a question as a turn
 * of its conversation: /ask (`conversation_id`), the chat API and A2A (`contextId`).
 */
import { Kvm } from '@nats-io/kv';
import type { Bus } from '@askbus/bus';
import type { AskRequest, Message } from '@askbus/contracts';
import { memoryKv, natsKv } from './kv';
import { CONVERSATIONS_BUCKET, ConversationStore, MAX_PREV, userTurn } from './store';
import type { UserTurn } from './store';

export { CONVERSATIONS_BUCKET, ConversationStore, MAX_PREV, MAX_TURNS, userTurn } from './store';
export type { ConversationHistory, ConversationMeta, OpenTurn, Turn, UserTurn } from './store';
export { memoryKv, natsKv } from './kv';
export type { ConversationKv } from './kv';

/** How long a conversation is kept after its last turn. */
export const CONVERSATION_TTL_MS = 30 * 24 * 3_600_000;
/** The bucket's size limit: when full, new turns are not kept (a warning), older ones stay. */
export const CONVERSATIONS_MAX_BYTES = 1024 ** 3;
/** A store that does not answer within this long is skipped: the question runs without history. */
const STORE_WAIT_MS = 2_000;

const stores = new WeakMap<Bus, Promise<ConversationStore>>();

/**
 * The conversation store on a bus's NATS, opened once per bus: JetStream KV, or (NATS without
 * JetStream) a store in this process's memory.
 */
export function conversationsFor(bus: Bus): Promise<ConversationStore> {
  let store = stores.get(bus);
  if (!store) {
    store = openStore(bus);
    stores.set(bus, store);
  }
  return store;
}

async function openStore(bus: Bus): Promise<ConversationStore> {
  const kvm = new Kvm(bus.nc);
  try {
    const kv = await kvm.create(CONVERSATIONS_BUCKET, {
      history: 1,
      ttl: CONVERSATION_TTL_MS,
      max_bytes: CONVERSATIONS_MAX_BYTES,
    });
    return new ConversationStore(natsKv(kv));
  } catch (err) {
    // A bucket made with other settings is still the store; no JetStream at all is not.
    try {
      return new ConversationStore(natsKv(await kvm.open(CONVERSATIONS_BUCKET)));
    } catch {
      return new ConversationStore(memoryKv(), err);
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the conversation store did not answer in ${ms} ms`)),
      ms,
    );
    timer.unref();
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (err: unknown) => (clearTimeout(timer), reject(err instanceof Error ? err : new Error(String(err)))),
    );
  });
}

/** A question running as a turn of its conversation. */
export interface RunningTurn {
  /** The request to run: `prev` filled from the conversation when the client sent none. */
  request: AskRequest;
  /** Keeps one message of the answer. */
  add(m: Message): void;
  /** Stores the answer (never throws: a store failure only loses the history). */
  end(): Promise<void>;
}

export interface TurnOptions {
  /** The question as the chat API sent it (sender, message id); else one is made up. */
  user?: UserTurn;
  /** Earlier questions to use when neither the client nor the store has any (A2A task history). */
  fallbackPrev?: string[];
}

/**
 * Runs questions as turns of their conversations. A request without a conversation id is run
 * as it is. An explicit `prev` wins over the stored questions; the turn is recorded either way.
 */
export class ConversationTurns {
  constructor(
    private readonly store: Promise<ConversationStore>,
    private readonly warn: (err: unknown, msg: string) => void,
  ) {
    void store.then((s) => {
      if (!s.durable) warn(s.whyNotDurable, 'no JetStream KV: conversations are kept in this process only');
    });
  }

  async start(scope: string, request: AskRequest, opts: TurnOptions = {}): Promise<RunningTurn> {
    const fallback = (opts.fallbackPrev ?? []).slice(-MAX_PREV);
    const withPrev = (prev: string[]): AskRequest =>
      request.prev.length > 0 || prev.length === 0 ? request : { ...request, prev };
    if (request.conversationId === '')
      return { request: withPrev(fallback), add: () => {}, end: async () => {} };
    const user = opts.user ?? userTurn(request.query, request.site, request.mode);
    let open;
    try {
      const store = await withTimeout(this.store, STORE_WAIT_MS);
      open = await withTimeout(store.begin(scope, request.conversationId, user), STORE_WAIT_MS);
    } catch (err) {
      this.warn(err, 'conversation store unavailable; the question runs without its history');
      return { request: withPrev(fallback), add: () => {}, end: async () => {} };
    }
    const messages: Message[] = [];
    const turn = open;
    return {
      request: withPrev(open.prev.length > 0 ? open.prev : fallback),
      add: (m) => void messages.push(m),
      end: async () => {
        try {
          await withTimeout(turn.finish(messages), STORE_WAIT_MS);
        } catch (err) {
          this.warn(err, 'conversation store unavailable; the answer was not kept');
        }
      },
    };
  }
}

/** The turns of a bus's conversation store. */
export function conversationTurns(bus: Bus, warn: (err: unknown, msg: string) => void): ConversationTurns {
  return new ConversationTurns(conversationsFor(bus), warn);
}
