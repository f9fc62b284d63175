import { loadDemoSites, readVegaDataset } from '@askbus/demo-data';
import type { StoredItem } from '@askbus/contracts';
import { WordNet } from '@askbus/embeddings';
import { SiteCatalog } from './catalog';
import { Lexicon } from './lexicon';
import { SiteModel } from './model';
import { parseQuestion } from './parse';

/**
 * Sites for the tests: the two demo sites and a site of another kind built from a dataset
 * vega-datasets ships (penguin observations with PropertyValues, as a site owner would write
 * them), each in a catalog with its model, so a question can be parsed as the router does.
 */
export interface TestSite {
  catalog: SiteCatalog;
  model: SiteModel;
  items: StoredItem[];
  ask(question: string): ReturnType<typeof parseQuestion>;
}

let lexicon: Lexicon | undefined;
export function testLexicon(): Lexicon {
  return (lexicon ??= new Lexicon(WordNet.get()));
}

/** Palmer penguins as schema.org Observations with PropertyValues (species, island, lengths in mm, mass in g, sex). */
export function penguinItems(): StoredItem[] {
  const rows = readVegaDataset('penguins.json') as Record<string, string | number | null>[];
  const out: StoredItem[] = [];
  rows.forEach((r, i) => {
    if (!r.Species) return;
    const pv = (name: string, value: string | number | null | undefined, unitText?: string) =>
      value === null || value === undefined
        ? []
        : [{ '@type': 'PropertyValue', name, value, ...(unitText ? { unitText } : {}) }];
    const url = `https://penguins.example/observation/${i + 1}`;
    const name = `${String(r.Species)} penguin #${i + 1}`;
    out.push({
      url,
      name,
      site: 'penguins',
      '@type': 'Observation',
      schema_object: {
        '@type': 'Observation',
        url,
        name,
        variableMeasured: [
          ...pv('species', r.Species),
          ...pv('island', r.Island),
          ...pv('beak length', r['Beak Length (mm)'], 'mm'),
          ...pv('flipper length', r['Flipper Length (mm)'], 'mm'),
          ...pv('body mass', r['Body Mass (g)'], 'g'),
          ...pv('sex', r.Sex),
        ],
      },
    });
  });
  return out;
}

const cache = new Map<string, TestSite>();

/** A site by name: `movies`, `cars` or `penguins`. */
export function testSite(name: 'movies' | 'cars' | 'penguins'): TestSite {
  const hit = cache.get(name);
  if (hit) return hit;
  const items = name === 'penguins' ? penguinItems() : loadDemoSites().find((s) => s.site === name)!.items;
  const catalog = new SiteCatalog(true);
  for (const item of items) catalog.add(item);
  const model = new SiteModel([catalog.profile(name)!], testLexicon());
  const site: TestSite = {
    catalog,
    model,
    items,
    ask: (q) =>
      parseQuestion(q, { model, names: catalog.names.find(q, new Set([name])), now: new Date('2026-12-03') }),
  };
  cache.set(name, site);
  return site;
}
