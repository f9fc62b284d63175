import type { Logger } from 'pino';
import { contracts } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { defineService, fromEnv } from '@askbus/service';
import { RETRIEVER_SERVICE, serveRetriever, type RetrieverStore } from './index';
import { openStores, retrieverConfigFromEnv } from './open-store';

/**
 * The retriever's settings: the stores (open-store.ts: ASKBUS_RETRIEVER_BACKENDS or
 * ASKBUS_RETRIEVER_BACKEND, DATABASE_URL, ASKBUS_INDEX_DIR / ASKBUS_DATA_DIR,
 * ASKBUS_SNAPSHOT_BYTES, ASKBUS_SITE_BACKENDS) and ASKBUS_DEMO=1, which loads the demo sites
 * missing from them at start (`askbus up` and docker-compose).
 */
export const RetrieverServiceConfig = fromEnv((env) => ({
  stores: retrieverConfigFromEnv(env),
  demo: /^(1|true|yes)$/i.test(env.ASKBUS_DEMO ?? ''),
}));

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
  config: RetrieverServiceConfig,
  manifest: 'retriever.yaml',
  start: async ({ bus, log, config }) => {
    const { store, describe, close } = await openStores(config.stores, log);
    const demoLoaded = config.demo ? await loadMissingDemoSites(store, log) : {};
    await serveRetriever(bus, store);
    // The store closes after the bus drained (a pg pool must outlive the handlers).
    return { describe: { ...describe, demoLoaded }, close };
  },
});
