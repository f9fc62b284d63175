import type { NameMatch, RetrievedItem, SiteInfo, SiteProfile, StoredItem } from '@askbus/contracts';
import type { SearchParams, SearchResult } from './index-store';
import type { RefusedItem, UpsertOptions, UpsertResult } from './cross-site';
import type { RetrieverStore } from './index';

/** One store of a MultiStore, by the name placements use ("embedded", "pg", "pg-archive", …). */
export interface NamedStore {
  name: string;
  store: RetrieverStore;
}

export interface MultiStoreOptions {
  /** The stores, in order; a site no placement names goes to the first. */
  backends: readonly NamedStore[];
  /** Site → backend name, for sites no backend holds yet (ASKBUS_SITE_BACKENDS="movies=pg,…"). */
  placement?: Readonly<Record<string, string>>;
}

type ProfileEntry = SiteProfile | { site: string; version: string; unchanged: true };

/** At most this many name matches in a reply (the names contract's limit). */
const MAX_NAME_MATCHES = 50;
/** Items one name match lists (the contract's limit). */
const MAX_NAME_ITEMS = 20;
/** URLs a lookup in the other backends asks for at once. */
const URLS_PER_LOOKUP = 1_000;

/**
 * Several retriever stores as one: the embedded index and PostgreSQL, or two databases. Each site
 * lives in one backend — the one that holds it, else the one its placement names, else the first
 * — and its upserts and deletes go there. Searches ask the backends holding the asked sites
 * (every backend for `all` or a site none holds), in parallel; when more than one answers, their
 * items are merged by URL (the best score kept) and ordered by score. Sites, profiles, names and
 * items are the union of the backends'.
 *
 * Which backend holds a site is learned from the backends' `sites()` on `open` and kept by this
 * store's own writes: writes to a backend from elsewhere are seen after the next `open` (as
 * PgStore's vocabulary and profiles are).
 */
export class MultiStore implements RetrieverStore {
  private readonly backends: readonly NamedStore[];
  private readonly placement: Readonly<Record<string, string>>;
  /** Site → the backend that holds it. */
  private readonly home = new Map<string, NamedStore>();

  private constructor(opts: MultiStoreOptions) {
    if (opts.backends.length === 0) throw new Error('a MultiStore needs at least one backend');
    const names = opts.backends.map((b) => b.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new Error(`backend "${twice}" is named twice`);
    for (const [site, backend] of Object.entries(opts.placement ?? {})) {
      if (!names.includes(backend))
        throw new Error(`site "${site}" is placed on "${backend}", which is not one of ${names.join(', ')}`);
    }
    this.backends = opts.backends;
    this.placement = opts.placement ?? {};
  }

  /** The stores as one, with which of them holds each site learned from their `sites()`. */
  static async open(opts: MultiStoreOptions): Promise<MultiStore> {
    const multi = new MultiStore(opts);
    await multi.learnHomes();
    return multi;
  }

  private async learnHomes(): Promise<void> {
    const held = await Promise.all(this.backends.map(async (b) => ({ b, sites: await b.store.sites() })));
    this.home.clear();
    for (const { b, sites } of held) {
      for (const s of sites) {
        const other = this.home.get(s.name);
        if (other)
          throw new Error(
            `site "${s.name}" is held by both "${other.name}" and "${b.name}": delete it from one of them`,
          );
        this.home.set(s.name, b);
      }
    }
  }

  /** The backend names, in order. */
  get names(): string[] {
    return this.backends.map((b) => b.name);
  }

  /** Where a site is, or would go: the backend holding it, else its placement, else the first. */
  backendOf(site: string): string {
    return this.target(site).name;
  }

  private target(site: string): NamedStore {
    const placed = this.placement[site];
    return this.home.get(site) ?? this.backends.find((b) => b.name === placed) ?? this.backends[0]!;
  }

  /** The backends a search of these sites asks: all for `all` or a site no backend holds. */
  private holding(site: readonly string[]): NamedStore[] {
    if (site.includes('all') || site.some((s) => !this.home.has(s))) return [...this.backends];
    const wanted = new Set(site.map((s) => this.home.get(s)!));
    return this.backends.filter((b) => wanted.has(b));
  }

  async search(params: SearchParams): Promise<RetrievedItem[]> {
    const asked = this.holding(params.site);
    const lists = await Promise.all(asked.map((b) => b.store.search(params)));
    return lists.length === 1 ? lists[0]! : mergeByUrl(lists, params.numResults ?? 50);
  }

  async searchWithOutcome(params: SearchParams): Promise<SearchResult> {
    const asked = this.holding(params.site);
    const results = await Promise.all(asked.map((b) => b.store.searchWithOutcome(params)));
    // one backend with items: its answer as it is, in the order its constraints gave
    const answering = results.filter((r) => r.items.length > 0);
    if (answering.length <= 1) return answering[0] ?? results[0]!;
    const items = mergeByUrl(
      results.map((r) => r.items),
      params.numResults ?? 50,
    );
    const outcomes = results.flatMap((r) => (r.outcome ? [r.outcome] : []));
    if (outcomes.length === 0) return { items };
    const orders = outcomes.find((o) => o.orders)?.orders;
    return {
      items,
      outcome: {
        matched: outcomes.reduce((n, o) => n + o.matched, 0),
        relaxed: [...new Set(outcomes.flatMap((o) => o.relaxed))],
        ...(orders ? { orders } : {}),
      },
    };
  }

  async profiles(site: readonly string[], known?: Readonly<Record<string, string>>): Promise<ProfileEntry[]> {
    const asked = this.holding(site);
    const lists = await Promise.all(
      asked.map(async (b) => ({ b, list: await b.store.profiles(site, known) })),
    );
    const bySite = new Map<string, ProfileEntry>();
    for (const { b, list } of lists) {
      for (const p of list) {
        // a site's own backend speaks for it
        if (!bySite.has(p.site) || this.home.get(p.site) === b) bySite.set(p.site, p);
      }
    }
    return [...bySite.values()];
  }

  async findNames(text: string, site: readonly string[]): Promise<NameMatch[]> {
    const lists = await Promise.all(this.holding(site).map((b) => b.store.findNames(text, site)));
    if (lists.length === 1) return lists[0]!;
    const bySpan = new Map<string, NameMatch>();
    for (const m of lists.flat()) {
      const key = `${m.start}:${m.end}`;
      const had = bySpan.get(key);
      bySpan.set(
        key,
        had
          ? {
              ...had,
              exact: had.exact || m.exact,
              common: had.common && m.common,
              items: [...had.items, ...m.items].slice(0, MAX_NAME_ITEMS),
            }
          : m,
      );
    }
    return [...bySpan.values()].sort((a, b) => a.start - b.start || b.end - a.end).slice(0, MAX_NAME_MATCHES);
  }

  async getItems(urls: readonly string[]): Promise<StoredItem[]> {
    const lists = await Promise.all(this.backends.map((b) => b.store.getItems(urls)));
    const byUrl = new Map<string, StoredItem>();
    for (const list of lists) for (const item of list) if (!byUrl.has(item.url)) byUrl.set(item.url, item);
    return urls.map((u) => byUrl.get(u)).filter((x): x is StoredItem => x !== undefined);
  }

  /**
   * Into the site's backend. A URL another site holds in another backend is refused, with or
   * without `move` (a store can take an item from one of its own sites, not from another store).
   */
  async upsert(site: string, items: readonly StoredItem[], opts: UpsertOptions = {}): Promise<UpsertResult> {
    const target = this.target(site);
    const others = this.backends.filter((b) => b !== target);
    const refused: RefusedItem[] = [];
    let keep = items;
    if (others.length && items.length) {
      const elsewhere = new Map<string, string>();
      const urls = [...new Set(items.map((i) => i.url))];
      for (let i = 0; i < urls.length; i += URLS_PER_LOOKUP) {
        const chunk = urls.slice(i, i + URLS_PER_LOOKUP);
        for (const list of await Promise.all(others.map((b) => b.store.getItems(chunk))))
          for (const held of list) elsewhere.set(held.url, held.site);
      }
      if (elsewhere.size) {
        for (const url of urls) {
          const holder = elsewhere.get(url);
          if (holder !== undefined) refused.push({ url, site: holder });
        }
        keep = items.filter((i) => !elsewhere.has(i.url));
      }
    }
    const result = await target.store.upsert(site, keep, opts);
    if (result.upserted > 0) this.home.set(site, target);
    const rest = await Promise.all(others.map(async (b) => await b.store.sites()));
    const total = result.total + rest.flat().reduce((n, s) => n + s.itemCount, 0);
    const allRefused = [...(result.refused ?? []), ...refused];
    return { upserted: result.upserted, total, ...(allRefused.length ? { refused: allRefused } : {}) };
  }

  async deleteSite(site: string): Promise<number> {
    const holder = this.home.get(site);
    const from = holder ? [holder] : this.backends;
    let deleted = 0;
    for (const b of from) deleted += await b.store.deleteSite(site);
    this.home.delete(site);
    return deleted;
  }

  async sites(): Promise<SiteInfo[]> {
    const lists = await Promise.all(this.backends.map(async (b) => await b.store.sites()));
    const bySite = new Map<string, SiteInfo>();
    for (const s of lists.flat()) {
      const had = bySite.get(s.name);
      bySite.set(
        s.name,
        had
          ? {
              name: s.name,
              itemCount: had.itemCount + s.itemCount,
              types: [...new Set([...had.types, ...s.types])],
            }
          : s,
      );
    }
    return [...bySite.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async persist(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.store.persist()));
  }
}

/** Lists of retrieved items as one: each URL once with its best score, best first, `limit` of them. */
export function mergeByUrl(lists: readonly (readonly RetrievedItem[])[], limit: number): RetrievedItem[] {
  const best = new Map<string, RetrievedItem>();
  for (const list of lists) {
    for (const item of list) {
      const had = best.get(item.url);
      if (!had || item.retrievalScore > had.retrievalScore) best.set(item.url, item);
    }
  }
  return [...best.values()]
    .sort((a, b) => b.retrievalScore - a.retrievalScore || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
    .slice(0, limit);
}
