import type { AskFilters, RetrievedItem } from '@askbus/contracts';

type FilterValue = AskFilters[string];

const TYPE_KEYS = new Set(['type', '@type']);

const asList = (v: FilterValue): (string | number | boolean)[] => (Array.isArray(v) ? v : [v]);

/** The schema.org types the filters ask for, which the retriever filters on itself. */
export function typesOf(filters: AskFilters | undefined): string[] | undefined {
  if (!filters) return undefined;
  const types = Object.entries(filters)
    .filter(([k]) => TYPE_KEYS.has(k))
    .flatMap(([, v]) => asList(v).map(String));
  return types.length > 0 ? types : undefined;
}

/** The text values of a schema.org property: names of nested things, numbers as text. */
function valuesOf(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.flatMap(valuesOf);
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return ['name', 'value', '@id'].flatMap((k) => valuesOf(o[k]));
  }
  return [String(v)];
}

/**
 * Whether an item passes the filters other than its type. A filter on a property the item does
 * not have is ignored (protocol 0.5: filters apply "where the data has them"); where it has it,
 * one of the filter's values must match one of the item's, as text, either containing the other
 * ignoring case: `genre: "western"` matches ["Western"], `datePublished: 1985` "1985-06-28".
 */
export function passesFilters(item: RetrievedItem, filters: AskFilters | undefined): boolean {
  if (!filters) return true;
  const props = new Map(Object.entries(item.schema_object).map(([k, v]) => [k.toLowerCase(), v]));
  for (const [key, wanted] of Object.entries(filters)) {
    if (TYPE_KEYS.has(key)) continue;
    if (!props.has(key.toLowerCase())) continue;
    const have = valuesOf(props.get(key.toLowerCase())).map((s) => s.toLowerCase());
    const ok = asList(wanted)
      .map((w) => String(w).toLowerCase())
      .some((w) => have.some((h) => h.includes(w) || w.includes(h)));
    if (!ok) return false;
  }
  return true;
}
