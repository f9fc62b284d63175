import { keyLabel, schemaMemberName, shownLabel, unitOf } from '@askbus/understand';

/** An amount of money as people write it: "$849", "€12.50"; an unknown currency after the number. */
export function moneyText(amount: number, currency: string | undefined): string {
  const digits = Number.isInteger(amount) ? 0 : 2;
  if (currency) {
    try {
      return new Intl.NumberFormat('en-US', {
        style: 'currency',
        currency,
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      }).format(amount);
    } catch {
      // not an ISO 4217 code ("points"): the number, then the site's word
    }
  }
  const n = amount.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return currency ? `${n} ${currency}` : n;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const numberIn = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)
      ? Number(v)
      : undefined;

/** A value of a schema.org field as text. */
export function fieldText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(fieldText).filter(Boolean).join(', ');
  if (typeof v === 'string') {
    // a schema.org enumeration member written as its URL: its name ("In Stock")
    return schemaMemberName(v) ?? v;
  }
  if (typeof v !== 'object') return String(v);
  const o = v as Record<string, unknown>;
  // schema.org's rating scale is 1-5 unless the rating says otherwise
  if ('ratingValue' in o) {
    const count = o.ratingCount ?? o.reviewCount;
    const noun = o.ratingCount !== undefined ? 'votes' : 'reviews';
    return `${String(o.ratingValue)}/${String(o.bestRating ?? 5)}${count ? ` (${String(count)} ${noun})` : ''}`;
  }
  // a MonetaryAmount: its number in its currency, per the period its QuantitativeValue names
  if (typeof o.currency === 'string' && isRecord(o.value)) {
    const q = o.value;
    const per = typeof q.unitText === 'string' ? ` per ${q.unitText.toLowerCase()}` : '';
    const amount = numberIn(q.value ?? q.minValue);
    return `${amount !== undefined ? moneyText(amount, o.currency) : `${fieldText(q.value ?? q.minValue)} ${o.currency}`}${per}`;
  }
  // an Offer: its price in its currency, and whether it can be had
  if ('price' in o) {
    const amount = numberIn(o.price);
    const currency = typeof o.priceCurrency === 'string' ? o.priceCurrency : undefined;
    const price = amount !== undefined ? moneyText(amount, currency) : fieldText(o.price);
    return [price, fieldText(o.availability)].filter(Boolean).join(', ');
  }
  if ('value' in o) {
    // a unit as people write it: "kg" for the UN/CEFACT code "KGM"
    const code = typeof o.unitCode === 'string' ? o.unitCode : undefined;
    const unit = typeof o.unitText === 'string' ? o.unitText : (unitOf(code)?.spellings[0] ?? code);
    return `${o.name ? `${String(o.name)}: ` : ''}${fieldText(o.value)}${unit ? ` ${unit}` : ''}`;
  }
  if (typeof o.name === 'string') return o.name;
  return Object.entries(o)
    .filter(([k]) => !k.startsWith('@'))
    .map(([k, x]) => `${fieldLabel(k)} ${fieldText(x)}`)
    .join(', ');
}

/** A schema.org key in words: "releaseDate" → "release date"; a review summary is the "rating". */
export function fieldLabel(key: string): string {
  return shownLabel(keyLabel(key).label || key);
}

/** One property of an item for people: its name in words and its value as text. */
export interface FieldRow {
  /** The top-level key the row comes from ("additionalProperty", "offers"). */
  key: string;
  /** What the row is about, in words: "release date", "RAM", "price". */
  field: string;
  text: string;
}

/**
 * An item's properties as rows for people. A list of named values (schema.org's
 * `additionalProperty`) gives a row per name; a single Offer gives its price and its
 * availability as rows of their own, so two items' rows line up by what they say.
 */
export function fieldRows(schema: Record<string, unknown>, skip: ReadonlySet<string>): FieldRow[] {
  const rows: FieldRow[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (skip.has(key) || key.startsWith('@')) continue;
    const list = Array.isArray(value) ? value : [value];
    const named = list.every((x) => isRecord(x) && typeof x.name === 'string' && 'value' in x);
    if (named && list.length) {
      for (const x of list as Record<string, unknown>[])
        rows.push({ key, field: String(x.name), text: fieldText({ ...x, name: undefined }) });
      continue;
    }
    if (isRecord(value) && 'price' in value) {
      const { availability, ...rest } = value;
      rows.push({ key, field: 'price', text: fieldText({ ...rest, availability: undefined }) });
      if (availability !== undefined)
        rows.push({ key, field: 'availability', text: fieldText(availability) });
      continue;
    }
    const text = fieldText(value);
    if (text) rows.push({ key, field: fieldLabel(key), text });
  }
  return rows.filter((r) => r.text !== '');
}
