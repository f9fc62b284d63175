import type { NameMatch, SiteProfile, Understanding } from '@askbus/contracts';
import type { Llm } from '@askbus/llm';
import { Lexicon, parseQuestion, SiteModel, type WordNetLike } from '@askbus/understand';
import { llmReading } from './understand-llm';

/**
 * The router's understanding of a question: the sites' profiles (cached by version: the
 * retriever sends a profile again only when it changed), the item names the question holds
 * (asked of the retriever each time), and the parser over both. A repeated question within a
 * few seconds is understood once (FastTrack, routing and the search path all ask).
 */
export interface UnderstandPorts {
  profiles(
    site: readonly string[],
    known: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Array<SiteProfile | { site: string; version: string; unchanged: true }>>;
  names(site: readonly string[], text: string, signal: AbortSignal): Promise<NameMatch[]>;
}

export interface UnderstanderOptions {
  /** How long a profile is used without asking whether it changed (ms). */
  profileTtlMs?: number;
  /** How long an understanding is reused for the same question (ms). */
  memoMs?: number;
  /**
   * A language model that reads the question into the same structure (checked against the
   * profile); the local parse is its fallback. A `local` provider is not asked.
   */
  llm?: Llm;
  /** How long the model may take to read a question before the local parse is used (ms). */
  llmTimeoutMs?: number;
}

/** A question's understanding with the model it was read against (for a language model to check). */
export interface Understood {
  understanding: Understanding;
  model: SiteModel;
}

const MAX_MEMO = 200;

export class Understander {
  private readonly profiles = new Map<string, { profile: SiteProfile; checked: number }>();
  private readonly models = new Map<string, SiteModel>();
  private readonly memo = new Map<string, { at: number; value: Promise<Understood | undefined> }>();
  private readonly lexicon: Lexicon;
  private readonly ttl: number;
  private readonly memoMs: number;

  constructor(
    private readonly ports: UnderstandPorts,
    wordnet: WordNetLike,
    opts: UnderstanderOptions = {},
  ) {
    this.lexicon = new Lexicon(wordnet);
    this.ttl = opts.profileTtlMs ?? 1_000;
    this.memoMs = opts.memoMs ?? 5_000;
    this.llm = opts.llm && opts.llm.provider !== 'local' ? opts.llm : undefined;
    this.llmTimeoutMs = opts.llmTimeoutMs ?? 8_000;
  }

  private readonly llm: Llm | undefined;
  private readonly llmTimeoutMs: number;

  /** The question understood against the sites' profiles; undefined when no site has a profile. */
  understand(query: string, site: readonly string[], signal: AbortSignal): Promise<Understood | undefined> {
    const key = `${site.join(',')}\u0000${query}`;
    const now = Date.now();
    const hit = this.memo.get(key);
    if (hit && now - hit.at < this.memoMs) return raced(hit.value, signal);
    // shared by every caller of the same question, so no one caller's cancel may stop it
    const value = this.compute(query, site, AbortSignal.timeout(10_000));
    // a failed attempt is not remembered
    value.catch(() => this.memo.delete(key));
    this.memo.set(key, { at: now, value });
    if (this.memo.size > MAX_MEMO) this.memo.delete(this.memo.keys().next().value!);
    return raced(value, signal);
  }

  /** The model of the sites' current profiles (for a language model's answer to be checked against). */
  async model(site: readonly string[], signal: AbortSignal): Promise<SiteModel | undefined> {
    const profiles = await this.profilesFor(site, signal);
    return profiles.length ? this.modelOf(profiles) : undefined;
  }

  private async compute(
    query: string,
    site: readonly string[],
    signal: AbortSignal,
  ): Promise<Understood | undefined> {
    const [profiles, names] = await Promise.all([
      this.profilesFor(site, signal),
      this.ports.names(site, query.slice(0, 2_000), signal).catch(() => [] as NameMatch[]),
    ]);
    if (profiles.length === 0) return undefined;
    const model = this.modelOf(profiles);
    const local = parseQuestion(query, { model, names });
    if (!this.llm) return { understanding: local, model };
    const read = await llmReading(
      this.llm,
      query,
      model,
      names,
      local,
      AbortSignal.any([signal, AbortSignal.timeout(this.llmTimeoutMs)]),
    );
    return { understanding: read ?? local, model };
  }

  private modelOf(profiles: readonly SiteProfile[]): SiteModel {
    const key = profiles.map((p) => `${p.site}@${p.version}`).join(',');
    let model = this.models.get(key);
    if (!model) {
      model = new SiteModel(profiles, this.lexicon);
      // old versions are dropped: one model per set of sites is enough
      for (const k of [...this.models.keys()]) if (sameSites(k, key)) this.models.delete(k);
      this.models.set(key, model);
    }
    return model;
  }

  private async profilesFor(site: readonly string[], signal: AbortSignal): Promise<SiteProfile[]> {
    const now = Date.now();
    const fresh =
      !site.includes('all') &&
      site.every((s) => {
        const p = this.profiles.get(s);
        return p && now - p.checked < this.ttl;
      });
    if (!fresh) {
      const known: Record<string, string> = {};
      for (const [s, p] of this.profiles) known[s] = p.profile.version;
      const reply = await this.ports.profiles(site, known, signal);
      const seen = new Set<string>();
      for (const p of reply) {
        seen.add(p.site);
        if ('unchanged' in p) {
          const have = this.profiles.get(p.site);
          if (have) have.checked = now;
        } else this.profiles.set(p.site, { profile: p, checked: now });
      }
      if (site.includes('all')) {
        for (const s of [...this.profiles.keys()]) if (!seen.has(s)) this.profiles.delete(s);
        return [...seen].map((s) => this.profiles.get(s)?.profile).filter((p): p is SiteProfile => !!p);
      }
      for (const s of site) if (!seen.has(s)) this.profiles.delete(s);
    }
    return site.map((s) => this.profiles.get(s)?.profile).filter((p): p is SiteProfile => !!p);
  }
}

/** A shared promise, given up (for this caller only) when its signal aborts. */
function raced<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function sameSites(a: string, b: string): boolean {
  const sites = (k: string): string =>
    k
      .split(',')
      .map((x) => x.split('@')[0])
      .join(',');
  return sites(a) === sites(b);
}
