import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { embeddingsFromEnv, type EmbeddingProvider } from '@askbus/embeddings';
import { IndexStore } from './index-store';
import { PgStore } from './pg-store';
import { MultiStore, type NamedStore } from './multi-store';
import type { RetrieverStore } from './index';

export const RetrieverBackend = z.enum(['embedded', 'pg']);
export type RetrieverBackend = z.infer<typeof RetrieverBackend>;

/** What the retriever's stores are: which backends, where their data is, and which sites go where. */
export const RetrieverConfig = z
  .object({
    /** The stores, in order; the first takes the sites no placement names. */
    backends: z.array(RetrieverBackend).min(1),
    /** PostgreSQL with pgvector (postgres://…), for `pg`. */
    databaseUrl: z.string().min(1).optional(),
    /** The embedded index's directory. */
    indexDir: z.string().min(1),
    /** Journal bytes after which the embedded index writes a snapshot (its default: 64 MiB). */
    snapshotAfterBytes: z.number().int().positive().optional(),
    /** Site → backend, for sites no backend holds yet. */
    siteBackends: z.record(z.string().min(1), RetrieverBackend).default({}),
  })
  .superRefine((c, ctx) => {
    const twice = c.backends.find((b, i) => c.backends.indexOf(b) !== i);
    if (twice) ctx.addIssue({ code: 'custom', path: ['backends'], message: `"${twice}" is listed twice` });
    if (c.backends.includes('pg') && !c.databaseUrl)
      ctx.addIssue({ code: 'custom', path: ['databaseUrl'], message: 'the pg backend needs DATABASE_URL' });
    for (const [site, backend] of Object.entries(c.siteBackends)) {
      if (!c.backends.includes(backend))
        ctx.addIssue({
          code: 'custom',
          path: ['siteBackends', site],
          message: `"${site}" is placed on ${backend}, which is not one of the backends (${c.backends.join(', ')})`,
        });
    }
  });
export type RetrieverConfig = z.infer<typeof RetrieverConfig>;

const list = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The retriever's configuration from the environment:
 * - ASKBUS_RETRIEVER_BACKENDS: `embedded`, `pg` or both in order ("embedded,pg"); ASKBUS_RETRIEVER_BACKEND
 *   (one backend) is read when it is unset; default `embedded`
 * - DATABASE_URL: PostgreSQL with pgvector, for `pg`
 * - ASKBUS_INDEX_DIR, else <ASKBUS_DATA_DIR>/index (the layout `askbus up` uses), else ./.data/index
 * - ASKBUS_SNAPSHOT_BYTES: journal size after which the embedded index writes a snapshot
 * - ASKBUS_SITE_BACKENDS: "movies=pg,recipes=embedded" — where new sites go (default: the first backend)
 * Throws an Error naming every bad setting.
 */
export function retrieverConfigFromEnv(env: NodeJS.ProcessEnv = process.env): RetrieverConfig {
  const backends = list(env.ASKBUS_RETRIEVER_BACKENDS || env.ASKBUS_RETRIEVER_BACKEND || 'embedded');
  const siteBackends: Record<string, string> = {};
  const issues: string[] = [];
  for (const pair of list(env.ASKBUS_SITE_BACKENDS ?? '')) {
    const [site, backend, ...rest] = pair.split('=').map((x) => x.trim());
    if (!site || !backend || rest.length) issues.push(`ASKBUS_SITE_BACKENDS: "${pair}" is not site=backend`);
    else siteBackends[site] = backend;
  }
  const snapshot = env.ASKBUS_SNAPSHOT_BYTES ? Number(env.ASKBUS_SNAPSHOT_BYTES) : undefined;
  const parsed = RetrieverConfig.safeParse({
    backends,
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    indexDir: resolve(env.ASKBUS_INDEX_DIR || join(env.ASKBUS_DATA_DIR || '.data', 'index')),
    ...(snapshot !== undefined ? { snapshotAfterBytes: snapshot } : {}),
    siteBackends,
  });
  if (!parsed.success) issues.push(z.prettifyError(parsed.error));
  if (issues.length || !parsed.success) throw new Error(`retriever configuration:\n${issues.join('\n')}`);
  return parsed.data;
}

export interface OpenedStores {
  store: RetrieverStore;
  /** What to log about the stores once they are open. */
  describe: Record<string, unknown>;
  close: () => Promise<void>;
}

async function openOne(
  backend: RetrieverBackend,
  config: RetrieverConfig,
  log: Pick<Logger, 'warn'>,
  embedder: EmbeddingProvider | undefined,
): Promise<OpenedStores> {
  if (backend === 'pg') {
    const pgStore = await PgStore.open({
      connectionString: config.databaseUrl!,
      ...(embedder ? { embedder } : {}),
    });
    return {
      store: pgStore,
      describe: { backend, items: await pgStore.count() },
      close: () => pgStore.close(),
    };
  }
  const indexStore = await IndexStore.open({
    dataDir: config.indexDir,
    ...(embedder ? { embedder } : {}),
    ...(config.snapshotAfterBytes ? { snapshotAfterBytes: config.snapshotAfterBytes } : {}),
    onBackgroundError: (err) =>
      log.warn({ err }, 'background snapshot failed; the journal still holds every change'),
  });
  return {
    store: indexStore,
    describe: {
      backend,
      dataDir: config.indexDir,
      openedFrom: indexStore.openedFrom,
      vectorsFrom: indexStore.vectorsFrom,
      items: indexStore.size,
      journalRecordsReplayed: indexStore.replayed.records,
      journalTornBytesDropped: indexStore.replayed.tornBytes,
    },
    close: () => indexStore.close(),
  };
}

/**
 * The stores a configuration asks for: one backend as it is, several as a MultiStore (each site
 * in one of them, see `siteBackends`). Embeddings from ASKBUS_EMBEDDINGS (+ OPENAI_BASE_URL, …)
 * unless `embedder` is given, else each store's local model. A backend that fails to open closes
 * those opened before it.
 */
export async function openStores(
  config: RetrieverConfig,
  log: Pick<Logger, 'warn'>,
  embedder: EmbeddingProvider | undefined = embeddingsFromEnv(),
): Promise<OpenedStores> {
  const opened: (OpenedStores & { name: RetrieverBackend })[] = [];
  const closeAll = async () => {
    for (const o of opened.reverse()) await o.close();
  };
  try {
    for (const backend of config.backends)
      opened.push({ name: backend, ...(await openOne(backend, config, log, embedder)) });
    if (opened.length === 1) return opened[0]!;
    const backends: NamedStore[] = opened.map((o) => ({ name: o.name, store: o.store }));
    const multi = await MultiStore.open({ backends, placement: config.siteBackends });
    return {
      store: multi,
      describe: { backends: opened.map((o) => o.describe), siteBackends: config.siteBackends },
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
