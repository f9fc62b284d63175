import type { PropertyProfile } from '@askbus/contracts';
import { unitOf, UNITS } from './units';

/** A date, or a number that is a year: whole, with no unit, all its values years of our era. */
export const isYearValued = (
  p: Pick<PropertyProfile, 'unit'> & Partial<Pick<PropertyProfile, 'kind' | 'integer' | 'min' | 'max'>>,
): boolean =>
  p.kind === 'date' ||
  (p.kind === 'number' &&
    !p.unit &&
    p.integer === true &&
    (p.min ?? 0) >= 1000 &&
    (p.max ?? Infinity) <= 2200);

/** A property's label as people say it: schema.org's review summary is the "rating". */
export const shownLabel = (label: string): string =>
  /^(aggregate|review) rating$/.test(label) ? 'rating' : label;

/** Numbers and quantities written for people: "4,341 lb", "$1.84 billion", "194 minutes", "7.5/10". */

export function formatNumber(n: number, digits = 3): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${trim(n / 1e9, digits)} billion`;
  if (abs >= 1e6) return `${trim(n / 1e6, digits)} million`;
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  const decimals = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return Number(n.toFixed(decimals)).toLocaleString('en-US');
}

function trim(n: number, digits: number): string {
  return String(Number(n.toPrecision(digits)));
}

const CURRENCY_SIGNS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£', JPY: '¥' };
const LONG_NAMES: Record<string, [string, string]> = {
  min: ['minute', 'minutes'],
  h: ['hour', 'hours'],
  d: ['day', 'days'],
  wk: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
};

/** How a property shows its numbers: the site's own unit, converted back from the canonical one. */
export function showQuantity(
  canonical: number,
  prop: Pick<PropertyProfile, 'unit' | 'displayUnit' | 'dimension'> | undefined,
): string {
  if (!prop?.unit) return formatNumber(canonical);
  if (prop.dimension === 'rating') return `${formatNumber(canonical)}${prop.unit}`;
  if (prop.dimension === 'price level' && Number.isInteger(canonical) && canonical >= 1 && canonical <= 5)
    return prop.unit.repeat(canonical);
  const display = prop.displayUnit ? unitOf(prop.displayUnit) : undefined;
  const unit =
    display && display.canonical === prop.unit
      ? display
      : UNITS.find((u) => u.canonical === prop.unit && u.factor === 1);
  if (!unit) return `${formatNumber(canonical)} ${prop.unit}`;
  const value = unit.inverse !== undefined ? unit.inverse / canonical : canonical / unit.factor;
  const symbol = unit.spellings[0]!;
  if (unit.dimension === 'money') {
    const sign = CURRENCY_SIGNS[unit.canonical];
    const minus = value < 0 ? '−' : '';
    return sign ? `${minus}${sign}${formatNumber(Math.abs(value))}` : `${formatNumber(value)} ${symbol}`;
  }
  if (unit.dimension === 'percent') return `${formatNumber(value)}%`;
  // whole hours past two read as hours: "4 hours" for PT4H, not "240 minutes" ("102 minutes" stays)
  if (symbol === 'min' && value >= 120 && value % 60 === 0) return `${formatNumber(value / 60)} hours`;
  const long = LONG_NAMES[symbol];
  if (long) return `${formatNumber(value)} ${value === 1 ? long[0] : long[1]}`;
  return `${formatNumber(value)} ${symbol}`;
}

/** A span of years: "1990s" for a whole decade, "1970–1973", "1997". */
export function formatYears(first: number, last: number): string {
  if (first === last) return String(first);
  if (first % 10 === 0 && last === first + 9) return `${first}s`;
  return `${first}–${last}`;
}

/** "weight over 4,000 lb", "number of cylinders 8", "production budget under $10 million". */
export function formatRangeText(
  label: string,
  prop:
    | (Pick<PropertyProfile, 'unit' | 'displayUnit' | 'dimension'> &
        Partial<Pick<PropertyProfile, 'kind' | 'integer' | 'min' | 'max'>>)
    | undefined,
  min: number | undefined,
  max: number | undefined,
  minInclusive: boolean,
  maxInclusive: boolean,
): string {
  label = shownLabel(label);
  // a rating up to the top of its scale: "rating at least 4/5", not "4/5–5/5"
  const best = prop?.dimension === 'rating' && prop.unit?.startsWith('/') ? Number(prop.unit.slice(1)) : NaN;
  if (min !== undefined && max === best && min !== max)
    return `${label} ${minInclusive ? 'at least' : 'over'} ${showQuantity(min, prop)}`;
  // a number that is a year reads as one: "vintage before 1995", not "under 1,995"
  if (prop && prop.kind === 'number' && isYearValued(prop)) {
    if (min !== undefined && max !== undefined)
      return min === max ? `${label} ${min}` : `${label} ${min}–${max}`;
    if (min !== undefined) return `${label} ${minInclusive ? 'since' : 'after'} ${min}`;
    if (max !== undefined) return `${label} ${maxInclusive ? 'until' : 'before'} ${max}`;
  }
  const show = (v: number): string => showQuantity(v, prop);
  if (min !== undefined && max !== undefined) {
    // "number of cylinders" 8 → "8 cylinders"
    const count = /^number of (.+)$/.exec(label);
    if (min === max && count && !prop?.unit) return `${show(min)} ${count[1]}`;
    if (min === max) return `${label} ${show(min)}`;
    return `${label} ${show(min)}–${show(max)}`;
  }
  if (min !== undefined) return `${label} ${minInclusive ? 'at least' : 'over'} ${show(min)}`;
  if (max !== undefined) return `${label} ${maxInclusive ? 'at most' : 'under'} ${show(max)}`;
  return label;
}
