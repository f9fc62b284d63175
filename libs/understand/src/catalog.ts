import { randomBytes } from 'node:crypto';
import type { SiteProfile, StoredItem } from '@askbus/contracts';
import { extractFacts, factsByPath, itemYear, type Fact } from './facts';
import { NameIndex } from './names';
import { contributionOf, ProfileBuilder, type ProfileSnapshot } from './profile';

/**
 * A catalog as saved (not the facts): profile counts per site as plain data (JSON-safe), and
 * the names as NameIndex.save's bytes, their URLs as the numbers the store gave for them.
 */
export interface CatalogSnapshot {
  profiles: ProfileSnapshot[];
  names: Uint8Array;
}

/**
 * What a store knows of its items besides the items: each site's profile (kept by counts as
 * items come and go), the names index, and (optionally) each item's facts for filtering in
 * memory. Both retriever backends keep one; it changes only through `add` and `remove`.
 */
export class SiteCatalog {
  private readonly builders = new Map<string, ProfileBuilder>();
  private readonly factMaps = new Map<string, Map<string, Fact[]>>();
  readonly names = new NameIndex();
  /** Tells this process's profile versions from another's (a restart starts counting again). */
  private readonly epoch = randomBytes(3).toString('hex');

  /** @param keepFacts keep every item's facts in memory (the embedded index filters with them). */
  constructor(private readonly keepFacts: boolean) {}

  /** Adds an item; its facts by path (text left out, as `facts` gives them). */
  add(item: StoredItem): Map<string, Fact[]> {
    const facts = extractFacts(item.schema_object);
    this.builder(item.site).add(contributionOf(item['@type'], facts));
    const year = itemYear(facts);
    this.names.add({
      url: item.url,
      name: item.name,
      site: item.site,
      type: item['@type'],
      ...(year !== undefined ? { year } : {}),
    });
    const byPath = factsByPath(facts.filter((f) => f.kind !== 'text'));
    if (this.keepFacts) this.factMaps.set(item.url, byPath);
    return byPath;
  }

  /**
   * The profiles' counts and the names (`restore` reads them back; kept facts are not in it).
   * `numberOf` gives the number each name's URL is saved as (names without one are left out).
   * `withProfiles`: each site's profile computed and saved with its counts (ProfileBuilder.snapshot).
   */
  snapshot(numberOf: (url: string) => number | undefined, withProfiles = true): CatalogSnapshot {
    return {
      profiles: [...this.builders.values()].map((b) => b.snapshot(withProfiles)),
      names: this.names.save(numberOf),
    };
  }

  /**
   * Takes each site's counts back from `profiles`, a `snapshot` of this catalog made since its
   * last change: held packed, as a restored catalog holds them, not as the maps a load counted
   * them in (at 300k items about a third of their memory); a site changed since is left alone.
   * A packed site's maps are made again when it next changes, as after a restart.
   */
  settle(profiles: readonly ProfileSnapshot[]): void {
    for (const p of profiles) {
      const live = this.builders.get(p.site);
      if (!live) continue;
      const packed = ProfileBuilder.restore(p);
      if (packed.version === live.version) this.builders.set(p.site, packed);
    }
  }

  /**
   * Replaces the profiles and names with a snapshot's; `urlOf` gives back the URL of each number
   * (a catalog that keeps facts cannot: they are not in it). Throws on damaged names.
   */
  restore(s: CatalogSnapshot, urlOf: (n: number) => string | undefined): void {
    if (this.keepFacts) throw new Error('a catalog that keeps facts cannot be restored from a snapshot');
    const builders = s.profiles.map((p) => ProfileBuilder.restore(p));
    this.names.load(s.names, urlOf);
    this.builders.clear();
    for (const b of builders) this.builders.set(b.site, b);
  }

  /** Forgets every item. */
  clear(): void {
    this.builders.clear();
    this.factMaps.clear();
    this.names.restore([]);
  }

  /** Undoes `add` of this very item (pass the item as it was added). */
  remove(item: StoredItem): void {
    const b = this.builders.get(item.site);
    if (b) {
      b.remove(contributionOf(item['@type'], extractFacts(item.schema_object)));
      if (b.size <= 0) this.builders.delete(item.site);
    }
    this.names.remove(item.url);
    this.factMaps.delete(item.url);
  }

  /** The item's facts by path (kept ones, else computed). */
  facts(item: StoredItem): Map<string, Fact[]> {
    return (
      this.factMaps.get(item.url) ??
      factsByPath(extractFacts(item.schema_object).filter((f) => f.kind !== 'text'))
    );
  }

  profile(site: string): SiteProfile | undefined {
    const b = this.builders.get(site);
    if (!b) return undefined;
    const p = b.profile();
    return { ...p, version: `${this.epoch}-${p.version}` };
  }

  /** Each asked site's profile (`all`: every site); those whose version the caller has come back marked unchanged. */
  profiles(
    site: readonly string[],
    known: Readonly<Record<string, string>> = {},
  ): Array<SiteProfile | { site: string; version: string; unchanged: true }> {
    const names = site.includes('all') ? this.siteNames : site;
    const out: Array<SiteProfile | { site: string; version: string; unchanged: true }> = [];
    for (const name of names) {
      const version = this.version(name);
      if (version === undefined) continue;
      out.push(known[name] === version ? { site: name, version, unchanged: true } : this.profile(name)!);
    }
    return out;
  }

  version(site: string): string | undefined {
    const b = this.builders.get(site);
    return b ? `${this.epoch}-${b.version}` : undefined;
  }

  get siteNames(): string[] {
    return [...this.builders.keys()].sort();
  }

  private builder(site: string): ProfileBuilder {
    let b = this.builders.get(site);
    if (!b) this.builders.set(site, (b = new ProfileBuilder(site)));
    return b;
  }
}
