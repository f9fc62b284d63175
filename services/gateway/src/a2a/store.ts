/**
 * Durable A2A stores on NATS JetStream KV: tasks and push-notification configs survive a gateway
 * restart, and every gateway on the same NATS sees the same tasks. Keys are scoped by tenant and
 * owner (the authenticated user), as the SDK's in-memory stores are.
 */
import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import { Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ListTasksRequest, ListTasksResponse } from '@a2a-js/sdk';
import { resolveUserScope } from '@a2a-js/sdk/server';
import type { Bus } from '@askbus/bus';
import type {
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
  TaskStore,
} from '@a2a-js/sdk/server';
import { jsonNestingExceeds } from '../json-nesting';

export const TASKS_BUCKET = 'askbus_a2a_tasks';
export const PUSH_BUCKET = 'askbus_a2a_push';

const DEFAULT_PAGE_SIZE = 50;

/** One key token: base64url (KV-safe) behind a letter, so that '' is a token too. */
const tok = (s: string): string => `k${Buffer.from(s, 'utf8').toString('base64url')}`;
const scope = (ctx: ServerCallContext): string => `${tok(ctx.tenant ?? '')}.${tok(resolveUserScope(ctx))}`;

/** Opens (creating when missing) a KV bucket. */
export async function openBucket(nc: Bus['nc'], name: string, ttlMs = 0): Promise<KV> {
  return new Kvm(nc).create(name, { history: 1, ...(ttlMs > 0 ? { ttl: ttlMs } : {}) });
}

interface PageCursor {
  t: string;
  id: string;
}

const encodeCursor = (c: PageCursor): string => Buffer.from(JSON.stringify(c)).toString('base64url');
function decodeCursor(token: string): PageCursor | undefined {
  try {
    const text = Buffer.from(token, 'base64url').toString('utf8');
    // A cursor is one flat object: a client's token nesting deeper is no cursor (body-limits.ts).
    if (jsonNestingExceeds(text, 1)) return undefined;
    const c = JSON.parse(text) as Partial<PageCursor>;
    return typeof c.t === 'string' && typeof c.id === 'string' ? { t: c.t, id: c.id } : undefined;
  } catch {
    return undefined;
  }
}

export class KvTaskStore implements TaskStore {
  constructor(private readonly kv: KV) {}

  private key(taskId: string, ctx: ServerCallContext): string {
    return `${scope(ctx)}.${tok(taskId)}`;
  }

  async save(task: Task, ctx: ServerCallContext): Promise<void> {
    await this.kv.put(this.key(task.id, ctx), JSON.stringify(Task.toJSON(task)));
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<Task | undefined> {
    const e = await this.kv.get(this.key(taskId, ctx));
    if (!e || e.operation !== 'PUT' || e.length === 0) return undefined;
    return Task.fromJSON(e.json());
  }

  /** Every task of the caller's scope (a scan; fine for the retention this bucket keeps). */
  private async all(ctx: ServerCallContext): Promise<Task[]> {
    const keys: string[] = [];
    for await (const k of await this.kv.keys(`${scope(ctx)}.*`)) keys.push(k);
    const tasks = await Promise.all(
      keys.map(async (k) => {
        const e = await this.kv.get(k);
        return e && e.operation === 'PUT' && e.length > 0 ? Task.fromJSON(e.json()) : undefined;
      }),
    );
    return tasks.filter((t): t is Task => t !== undefined);
  }

  async list(params: ListTasksRequest, ctx: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const ts = (t: Task): string => t.status?.timestamp ?? '';
    let tasks = (await this.all(ctx)).filter(
      (t) =>
        (!params.contextId || t.contextId === params.contextId) &&
        (!params.status || t.status?.state === params.status) &&
        (after === undefined || (ts(t) !== '' && Date.parse(ts(t)) > after)),
    );
    tasks.sort((a, b) => ts(b).localeCompare(ts(a)) || b.id.localeCompare(a.id));
    const totalSize = tasks.length;
    if (params.pageToken) {
      const cursor = decodeCursor(params.pageToken);
      const i = cursor ? tasks.findIndex((t) => ts(t) === cursor.t && t.id === cursor.id) : -1;
      tasks = i === -1 ? [] : tasks.slice(i + 1);
    }
    const page = tasks.slice(0, pageSize);
    const last = page[page.length - 1];
    return {
      tasks: page.map((t) => (params.includeArtifacts ? t : { ...t, artifacts: [] })),
      nextPageToken: last && tasks.length > page.length ? encodeCursor({ t: ts(last), id: last.id }) : '',
      pageSize,
      totalSize,
    };
  }
}

interface StoredConfig {
  config: unknown;
  wireVersion: string;
}

/**
 * Push configs per task. `validate` runs before a config is stored (the webhook URL guard), so
 * a refused URL is an error of the call that registers it.
 */
export class KvPushStore implements PushNotificationStore {
  constructor(
    private readonly kv: KV,
    private readonly validate: (config: TaskPushNotificationConfig) => Promise<void> = async () => undefined,
  ) {}

  private prefix(taskId: string, ctx: ServerCallContext): string {
    return `${scope(ctx)}.${tok(taskId)}`;
  }

  async save(taskId: string, ctx: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    await this.validate(config);
    if (!config.id) config.id = randomUUID();
    const stored: StoredConfig = {
      config: TaskPushNotificationConfig.toJSON({ ...config, taskId }),
      wireVersion: ctx.requestedVersion,
    };
    await this.kv.put(`${this.prefix(taskId, ctx)}.${tok(config.id)}`, JSON.stringify(stored));
  }

  async loadWithMetadata(taskId: string, ctx: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const keys: string[] = [];
    for await (const k of await this.kv.keys(`${this.prefix(taskId, ctx)}.*`)) keys.push(k);
    keys.sort();
    const out: StoredPushNotificationConfig[] = [];
    for (const k of keys) {
      const e = await this.kv.get(k);
      if (!e || e.operation !== 'PUT' || e.length === 0) continue;
      const s = e.json<StoredConfig>();
      out.push({ config: TaskPushNotificationConfig.fromJSON(s.config), wireVersion: s.wireVersion });
    }
    return out;
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, ctx)).map((s) => s.config);
  }

  async delete(taskId: string, ctx: ServerCallContext, configId?: string): Promise<void> {
    if (configId !== undefined) {
      await this.kv.delete(`${this.prefix(taskId, ctx)}.${tok(configId)}`);
      return;
    }
    const keys: string[] = [];
    for await (const k of await this.kv.keys(`${this.prefix(taskId, ctx)}.*`)) keys.push(k);
    await Promise.all(keys.map((k) => this.kv.delete(k)));
  }
}

/** A push store that runs `validate` (the webhook URL guard) before it stores a config. */
export function validating(
  store: PushNotificationStore,
  validate: (config: TaskPushNotificationConfig) => Promise<void>,
): PushNotificationStore {
  const wrapped: PushNotificationStore = {
    save: async (taskId, ctx, config) => {
      await validate(config);
      await store.save(taskId, ctx, config);
    },
    load: (taskId, ctx) => store.load(taskId, ctx),
    delete: (taskId, ctx, configId) => store.delete(taskId, ctx, configId),
  };
  if (store.loadWithMetadata) wrapped.loadWithMetadata = store.loadWithMetadata.bind(store);
  return wrapped;
}
