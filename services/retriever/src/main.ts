import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { loadDemoSites } from '@askbus/demo-data';
import { embeddingsFromEnv } from '@askbus/embeddings';
import { runService } from '@askbus/telemetry';
import { IndexStore, PgStore, RETRIEVER_SERVICE, serveRetriever, type RetrieverStore } from './index';

// ASKBUS_RETRIEVER_BACKEND: embedded (default: MiniSearch + vectors in files) or pg (DATABASE_URL)
const backend = process.env.ASKBUS_RETRIEVER_BACKEND || 'embedded';
// ASKBUS_INDEX_DIR, else <ASKBUS_DATA_DIR>/index (the layout `askbus up` uses), else ./.data/index
const dataDir = resolve(
  process.env.ASKBUS_INDEX_DIR || join(process.env.ASKBUS_DATA_DIR || '.data', 'index'),
);
// ASKBUS_SNAPSHOT_BYTES: journal size after which the embedded index writes a snapshot (default 64 MiB)
const snapshotAfterBytes = Number(process.env.ASKBUS_SNAPSHOT_BYTES) || undefined;

/** The store the configuration asks for, with what to log about it and how to close it. */
async function openStore(log: Logger): Promise<{
  store: RetrieverStore;
  describe: Record<string, unknown>;
  close: () => Promise<void>;
}> {
  // ASKBUS_EMBEDDINGS=openai (+ OPENAI_BASE_URL, ASKBUS_EMBEDDINGS_MODEL, …), else the local model
  const embedder = embeddingsFromEnv();
  if (backend === 'pg') {
    if (!process.env.DATABASE_URL) throw new Error('ASKBUS_RETRIEVER_BACKEND=pg needs DATABASE_URL');
    const pgStore = await PgStore.open({
      connectionString: process.env.DATABASE_URL,
      ...(embedder ? { embedder } : {}),
    });
    return {
      store: pgStore,
      describe: { backend, items: await pgStore.count() },
      close: () => pgStore.close(),
    };
  }
  if (backend === 'embedded') {
    const indexStore = await IndexStore.open({
      dataDir,
      ...(embedder ? { embedder } : {}),
      ...(snapshotAfterBytes ? { snapshotAfterBytes } : {}),
      onBackgroundError: (err) =>
        log.warn({ err }, 'background snapshot failed; the journal still holds every change'),
    });
    return {
      store: indexStore,
      describe: {
        backend,
        dataDir,
        openedFrom: indexStore.openedFrom,
        vectorsFrom: indexStore.vectorsFrom,
        items: indexStore.size,
        journalRecordsReplayed: indexStore.replayed.records,
        journalTornBytesDropped: indexStore.replayed.tornBytes,
      },
      close: () => indexStore.close(),
    };
  }
  throw new Error(`ASKBUS_RETRIEVER_BACKEND must be embedded or pg, not "${backend}"`);
}

await runService(RETRIEVER_SERVICE, async ({ bus, log }) => {
  const { store, describe, close } = await openStore(log);
  await serveRetriever(bus, store);
  // ASKBUS_DEMO=1 (docker-compose sets it): load the demo sites missing from the index.
  if (process.env.ASKBUS_DEMO === '1') {
    const have = new Set((await store.sites()).map((s) => s.name));
    for (const { site, items } of loadDemoSites().filter((d) => !have.has(d.site))) {
      await store.upsert(site, items);
      log.info({ site, items: items.length }, 'loaded demo site');
    }
    await store.persist();
  }
  log.info(describe, 'retriever store open');
  // Runs before the bus drains; the store closes after (a pg pool must outlive the handlers).
  return async () => {
    await bus.drain();
    await close();
  };
});
