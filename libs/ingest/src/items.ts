import type { StoredItem } from '@askbus/contracts';

/** A record that could not be loaded: where it is, and why. Nothing else is lost. */
export interface IngestError {
  file: string;
  /** 1-based line of the record (JSON arrays: the line where the parser met the error; see `record`). */
  line?: number;
  /** 1-based position of the record in a JSON array. */
  record?: number;
  reason: string;
}

/** One thing a loader yields: an item (with NLWeb's precomputed vector when the file had one), or an error. */
export type IngestEvent =
  { kind: 'item'; item: StoredItem; vector?: number[] } | { kind: 'error'; error: IngestError };

export interface IngestOptions {
  /** The site every item is stored under. */
  site: string;
  /** `@type` for records without one (CSV rows, JSON lines); without it such records are errors. */
  defaultType?: string;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const firstString = (v: unknown): string | undefined => {
  if (typeof v === 'string') return v.trim() || undefined;
  if (Array.isArray(v)) for (const x of v) if (typeof x === 'string' && x.trim()) return x.trim();
  if (isRecord(v) && typeof v['@value'] === 'string') return v['@value'];
  return undefined;
};

/** The objects a JSON-LD value holds: itself, the elements of an array, the nodes of an `@graph`. */
export function* jsonLdNodes(value: unknown, depth = 0): Generator<Record<string, unknown>> {
  if (depth > 4) return;
  if (Array.isArray(value)) {
    for (const v of value) yield* jsonLdNodes(v, depth + 1);
  } else if (isRecord(value)) {
    const graph = value['@graph'];
    if (graph !== undefined) {
      const context = value['@context'];
      for (const node of jsonLdNodes(graph, depth + 1)) {
        yield context !== undefined && node['@context'] === undefined
          ? { '@context': context, ...node }
          : node;
      }
    } else yield value;
  }
}

/** Types that describe a page or a site's chrome rather than the content a user asks about. */
const STRUCTURAL_TYPES = new Set([
  'BreadcrumbList',
  'WebSite',
  'SearchAction',
  'ListItem',
  'SiteNavigationElement',
]);

/**
 * One schema.org node to a StoredItem, or the reason it is not one. The URL is the node's
 * `url`, else its `@id` when that is a link, else `fallbackUrl` (the page it came from).
 */
export function nodeToItem(
  node: Record<string, unknown>,
  opts: IngestOptions,
  fallbackUrl?: string,
): StoredItem | string {
  const typeValue = node['@type'];
  const type =
    (typeof typeValue === 'string'
      ? typeValue
      : Array.isArray(typeValue)
        ? firstString(typeValue)
        : undefined) ?? opts.defaultType;
  if (!type) return 'no @type (and no default type)';
  if (STRUCTURAL_TYPES.has(type)) return `skipped structural type ${type}`;
  const id = firstString(node['@id']);
  const url =
    firstString(node.url) ?? (id && /^(https?:|urn:)/i.test(id) ? id : undefined) ?? fallbackUrl ?? undefined;
  if (!url) return 'no url or @id';
  const name = firstString(node.name) ?? firstString(node.headline) ?? firstString(node.title) ?? '';
  const schema_object = node['@type'] === undefined ? { '@type': type, ...node } : node;
  return {
    url,
    name,
    site: opts.site,
    '@type': type.replace(/^(https?:\/\/)?schema\.org\//i, ''),
    schema_object,
  };
}

/**
 * How deep a record may nest. schema.org data nests a handful of levels (a Recipe's sections,
 * steps, their images); a record far deeper is no data a user asks about, and every later step
 * that walks it (JSON.stringify for the bus, the retriever's text) recurses.
 */
export const MAX_RECORD_DEPTH = 100;

/** Whether a JSON value nests deeper than `max` levels (`[]` and `{}` count 1); no recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

const tooDeep = `nested deeper than ${MAX_RECORD_DEPTH} levels`;

/** Every item of a JSON-LD value, with an error event for each node that is not one. */
export function* jsonLdEvents(
  value: unknown,
  opts: IngestOptions,
  where: Omit<IngestError, 'reason'>,
  fallbackUrl?: string,
): Generator<IngestEvent> {
  const deep = nestsDeeperThan(value, MAX_RECORD_DEPTH);
  let n = 0;
  let refused = 0;
  for (const node of jsonLdNodes(value)) {
    if (deep && nestsDeeperThan(node, MAX_RECORD_DEPTH)) {
      refused++;
      yield { kind: 'error', error: { ...where, reason: tooDeep } };
      continue;
    }
    // several nodes without URLs on one page: keep them apart (#2, #3 …), stable across loads
    const fb = fallbackUrl && n > 0 ? `${fallbackUrl}#${n + 1}` : fallbackUrl;
    const r = nodeToItem(node, opts, fb);
    if (typeof r === 'string') {
      if (!r.startsWith('skipped structural')) yield { kind: 'error', error: { ...where, reason: r } };
    } else {
      n++;
      yield { kind: 'item', item: r };
    }
  }
  if (n === 0 && !isRecord(value) && !Array.isArray(value)) {
    yield { kind: 'error', error: { ...where, reason: 'not a JSON object or array' } };
  } else if (n === 0 && refused === 0 && deep) {
    // Arrays in arrays deeper than the nodes are looked for: nothing came out, say why.
    yield { kind: 'error', error: { ...where, reason: tooDeep } };
  }
}
