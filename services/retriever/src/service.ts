import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Logger } from 'pino';
import { contracts } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { embeddingsFromEnv } from '@askbus/embeddings';
import { defineService, envVar, type Env } from '@askbus/service';
import { IndexStore, PgStore, RETRIEVER_SERVICE, serveRetriever, type RetrieverStore } from './index';

/** The retriever's settings, from the environment. */
export const RetrieverConfig = z
  .object({
    // embedded (default: MiniSearch + vectors in files) or pg (DATABASE_URL)
    ASKBUS_RETRIEVER_BACKEND: z.preprocess(
      (v) => (v === '' ? undefined : v),
      z.enum(['embedded', 'pg']).default('embedded'),
    ),
    DATABASE_URL: envVar.optional(),
    // ASKBUS_INDEX_DIR, else <ASKBUS_DATA_DIR>/index (the layout `askbus up` uses), else ./.data/index
    ASKBUS_INDEX_DIR: envVar.optional(),
    ASKBUS_DATA_DIR: envVar.optional(),
    // journal size after which the embedded index writes a snapshot (default 64 MiB)
    ASKBUS_SNAPSHOT_BYTES: envVar.optionalInt(1),
    // 1: load the demo sites missing from the index at start (`askbus up` and docker-compose)
    ASKBUS_DEMO: envVar.flag(false),
  })
  .refine((e) => e.ASKBUS_RETRIEVER_BACKEND !== 'pg' || e.DATABASE_URL !== undefined, {
    message: 'ASKBUS_RETRIEVER_BACKEND=pg needs DATABASE_URL',
    path: ['DATABASE_URL'],
  })
  .transform((e) => ({
    backend: e.ASKBUS_RETRIEVER_BACKEND,
    databaseUrl: e.DATABASE_URL,
    indexDir: resolve(e.ASKBUS_INDEX_DIR ?? join(e.ASKBUS_DATA_DIR ?? '.data', 'index')),
    snapshotAfterBytes: e.ASKBUS_SNAPSHOT_BYTES,
    demo: e.ASKBUS_DEMO,
  }));
export type RetrieverConfig = z.infer<typeof RetrieverConfig>;

/** The store the configuration asks for, with what to log about it and how to close it. */
async function openStore(
  config: RetrieverConfig,
  env: Env,
  log: Logger,
): Promise<{ store: RetrieverStore; describe: Record<string, unknown>; close: () => Promise<void> }> {
  // ASKBUS_EMBEDDINGS=openai (+ OPENAI_BASE_URL, ASKBUS_EMBEDDINGS_MODEL, …), else the local model
  const embedder = embeddingsFromEnv(env);
  if (config.backend === 'pg') {
    const pgStore = await PgStore.open({
      connectionString: config.databaseUrl!,
      ...(embedder ? { embedder } : {}),
    });
    return {
      store: pgStore,
      describe: { backend: 'pg', items: await pgStore.count() },
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
      backend: 'embedded',
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

/** Loads the demo sites the store does not have yet; says which, with their item counts. */
async function loadMissingDemoSites(store: RetrieverStore, log: Logger): Promise<Record<string, number>> {
  const have = new Set((await store.sites()).map((s) => s.name));
  const missing = loadDemoSites().filter((d) => !have.has(d.site));
  for (const { site, items } of missing) {
    await store.upsert(site, items);
    log.info({ site, items: items.length }, 'loaded demo site');
  }
  if (missing.length > 0) await store.persist();
  return Object.fromEntries(missing.map((d) => [d.site, d.items.length]));
}

export default defineService({
  name: RETRIEVER_SERVICE,
  description:
    'Holds the sites’ items (embedded index or PostgreSQL) and answers search, profiles, names and upserts.',
  serves: [
    contracts.search,
    contracts.upsert,
    contracts.sites,
    contracts.delete,
    contracts.profile,
    contracts.names,
    contracts.items,
  ],
  calls: [],
  config: RetrieverConfig,
  manifest: 'retriever.yaml',
  start: async ({ bus, log, config }) => {
    const { store, describe, close } = await openStore(config, process.env, log);
    const demoLoaded = config.demo ? await loadMissingDemoSites(store, log) : {};
    await serveRetriever(bus, store);
    // The store closes after the bus drained (a pg pool must outlive the handlers).
    return { describe: { ...describe, demoLoaded }, close };
  },
});
