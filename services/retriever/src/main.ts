import { join, resolve } from 'node:path';
import pino from 'pino';
import { connectBus, onShutdown } from '@askbus/bus';
import { loadDemoSites } from '@askbus/demo-data';
import { RETRIEVER_SERVICE, startRetriever } from './index';

const log = pino({ name: RETRIEVER_SERVICE });
// ASKBUS_INDEX_DIR, else <ASKBUS_DATA_DIR>/index (the layout `askbus up` uses), else ./.data/index
const dataDir = resolve(
  process.env.ASKBUS_INDEX_DIR || join(process.env.ASKBUS_DATA_DIR || '.data', 'index'),
);

const bus = await connectBus({
  service: RETRIEVER_SERVICE,
  log: (level, msg, fields) => log[level](fields ?? {}, msg),
});
const { store } = await startRetriever(bus, { dataDir });
// ASKBUS_DEMO=1 (docker-compose sets it): load the demo sites missing from the index.
if (process.env.ASKBUS_DEMO === '1') {
  const have = new Set(store.sites().map((s) => s.name));
  for (const { site, items } of loadDemoSites().filter((d) => !have.has(d.site))) {
    store.upsert(site, items);
    log.info({ site, items: items.length }, 'loaded demo site');
  }
  await store.persist();
}
log.info(
  { nats: bus.nc.getServer(), dataDir, openedFrom: store.openedFrom, items: store.size },
  'askbus retriever serving',
);
onShutdown(() => bus.drain());
