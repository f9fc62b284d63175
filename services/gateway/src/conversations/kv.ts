/**
 * The key-value operations the conversation store needs, over NATS JetStream KV or, when the
 * NATS server has no JetStream, over a Map (conversations then live as long as the process).
 */
import type { KV } from '@nats-io/kv';

export interface KvValue {
  text: string;
  revision: number;
}

export interface ConversationKv {
  /** Whether the values survive a gateway restart and are shared by every gateway. */
  readonly durable: boolean;
  get(key: string): Promise<KvValue | undefined>;
  /** Writes a key that must not exist yet; throws when it does. */
  create(key: string, text: string): Promise<number>;
  /** Writes a key whose last revision must be `revision`; throws when another write came first. */
  update(key: string, text: string, revision: number): Promise<number>;
  put(key: string, text: string): Promise<number>;
  delete(key: string): Promise<void>;
  keys(filter: string): Promise<string[]>;
}

/** JetStream KV: a deleted key reads as missing. */
export function natsKv(kv: KV): ConversationKv {
  return {
    durable: true,
    async get(key) {
      const e = await kv.get(key);
      if (!e || e.operation !== 'PUT' || e.length === 0) return undefined;
      return { text: e.string(), revision: e.revision };
    },
    create: (key, text) => kv.create(key, text),
    update: (key, text, revision) => kv.update(key, text, revision),
    put: (key, text) => kv.put(key, text),
    delete: (key) => kv.delete(key),
    async keys(filter) {
      const out: string[] = [];
      for await (const k of await kv.keys(filter)) out.push(k);
      return out;
    },
  };
}

/** NATS subject-style filter: `*` matches one token, `>` the rest. */
function matches(filter: string, key: string): boolean {
  const f = filter.split('.');
  const k = key.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return k.length > i;
    if (i >= k.length || (f[i] !== '*' && f[i] !== k[i])) return false;
  }
  return f.length === k.length;
}

/** The same operations on a Map, with KV's create/update rules. */
export function memoryKv(): ConversationKv {
  const values = new Map<string, KvValue>();
  let revision = 0;
  return {
    durable: false,
    get: async (key) => values.get(key),
    async create(key, text) {
      if (values.has(key)) throw new Error(`key ${key} exists`);
      values.set(key, { text, revision: ++revision });
      return revision;
    },
    async update(key, text, expected) {
      if (values.get(key)?.revision !== expected) throw new Error(`key ${key} changed`);
      values.set(key, { text, revision: ++revision });
      return revision;
    },
    async put(key, text) {
      values.set(key, { text, revision: ++revision });
      return revision;
    },
    delete: async (key) => void values.delete(key),
    keys: async (filter) => [...values.keys()].filter((k) => matches(filter, k)),
  };
}
