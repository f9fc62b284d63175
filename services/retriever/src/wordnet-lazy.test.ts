import { describe, expect, it } from 'vitest';
import { loadDemoSites } from '@askbus/demo-data';
import { WordNet } from '@askbus/embeddings';
import { IndexStore } from './index-store';

/** WordNet (some 100 MB in memory) is read by the first question that needs it, not at open. */
describe('the local model in a store', () => {
  it('does not load WordNet to open, index or embed items: the first question does', async () => {
    const cars = loadDemoSites().find((s) => s.site === 'cars')!.items;
    const store = await IndexStore.open();
    await store.upsert('cars', cars);
    expect(WordNet.loaded).toBe(false);
    const found = await store.search({ query: 'fuel efficient japanese cars', site: ['cars'] });
    expect(found.length).toBeGreaterThan(0);
    expect(WordNet.loaded).toBe(true);
    await store.close();
  }, 60_000);
});
