/**
 * Builds an embedded index of `size` synthetic items in `dir` (for probing reopen:
 * `node --max-old-space-size=6144 --expose-gc --import tsx bench/retrieve.ts --reopen <copy> <size>`).
 *
 *   node --max-old-space-size=6144 --import tsx bench/build-index.ts <dir> <size>
 */
import { IndexStore } from '@askbus/retriever';
import { syntheticItems } from './retrieve-data';

const dir = process.argv[2];
const size = Number(process.argv[3]);
if (!dir || !Number.isInteger(size) || size <= 0) throw new Error('usage: build-index.ts <dir> <size>');
const t0 = performance.now();
const store = await IndexStore.open({ dataDir: dir });
for (const [site, items] of syntheticItems(size)) await store.upsert(site, items);
await store.persist();
await store.close();
process.stdout.write(`built ${size} items in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
