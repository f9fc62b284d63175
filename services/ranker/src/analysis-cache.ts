import { SchemaObject, type RankItem } from '@askbus/contracts';
import { BusError } from '@askbus/bus';
import { analyseItem, type AnalysedItem, type RankView } from './rank';

/** Reads back a RankItem's schema object; a malformed one is the caller's error (bad_request). */
export function rankViewOf(item: RankItem): RankView {
  let raw: unknown;
  try {
    raw = JSON.parse(item.schema);
  } catch {
    throw new BusError('bad_request', `the schema of ${item.url} is not JSON`);
  }
  const parsed = SchemaObject.safeParse(raw);
  if (!parsed.success || Array.isArray(raw))
    throw new BusError('bad_request', `the schema of ${item.url} is not a JSON object`);
  return { url: item.url, name: item.name, '@type': item['@type'], schema_object: parsed.data };
}

interface Entry {
  item: RankItem;
  analysed: AnalysedItem;
}

/**
 * The ranker's analyses of the items it scored lately, least recently used dropped first. Keyed
 * by URL; an entry counts only when the item sent now is the item analysed then (the same name,
 * type and schema text, compared whole), so an item that changed is analysed again. A hit skips
 * parsing the item's schema as well as analysing it.
 */
export class AnalysisCache {
  private readonly entries = new Map<string, Entry>();
  hits = 0;
  misses = 0;

  /** `maxItems` 0: no cache (every item analysed on each request). */
  constructor(readonly maxItems: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The analysis of `item`: kept from before when it is the same item, else made now. */
  analyse(item: RankItem): AnalysedItem {
    const e = this.entries.get(item.url);
    if (
      e &&
      e.item.schema === item.schema &&
      e.item.name === item.name &&
      e.item['@type'] === item['@type']
    ) {
      this.hits++;
      // most recently used last
      this.entries.delete(item.url);
      this.entries.set(item.url, e);
      return e.analysed;
    }
    this.misses++;
    const analysed = analyseItem(rankViewOf(item));
    if (this.maxItems > 0) {
      this.entries.delete(item.url);
      this.entries.set(item.url, { item, analysed });
      while (this.entries.size > this.maxItems) {
        const oldest = this.entries.keys().next();
        if (oldest.done) break;
        this.entries.delete(oldest.value);
      }
    }
    return analysed;
  }
}
