import type { Intent } from './concepts';

/** The few numbers the numeric intents look at, read from a schema.org object when present. */
export interface ItemFacts {
  /** fuelEfficiency in miles per gallon. */
  mpg?: number;
  /** vehicleEngine.enginePower in horsepower. */
  horsepower?: number;
  /** aggregateRating rescaled to 0..10. */
  rating?: number;
  /** Year of publication, model year, … */
  year?: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A finite number from a number or a numeric string ("7.3"); anything else is undefined. */
function toNumber(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

/**
 * A number or a QuantitativeValue's `value` with its unit (unitText or unitCode, if any).
 * With `unit`, a value whose unit is given and does not match is refused (a fuelEfficiency
 * in L/100km is not mpg).
 */
function quantity(v: unknown, unit?: RegExp): { value: number; unit: string } | undefined {
  const q = first(v);
  if (!isRecord(q)) {
    const value = toNumber(q);
    return value === undefined ? undefined : { value, unit: '' };
  }
  const u = [q.unitText, q.unitCode].find((x): x is string => typeof x === 'string') ?? '';
  if (unit && u !== '' && !unit.test(u)) return undefined;
  const value = toNumber(q.value);
  return value === undefined ? undefined : { value, unit: u };
}

const YEAR_KEYS = [
  'datePublished',
  'vehicleModelDate',
  'productionDate',
  'releaseDate',
  'dateCreated',
  'startDate',
  'copyrightYear',
];

function yearOf(v: unknown): number | undefined {
  const x = first(v);
  if (typeof x === 'number') return Number.isInteger(x) && x > 999 && x < 3000 ? x : undefined;
  if (typeof x !== 'string') return undefined;
  const m = /^\s*(\d{4})/.exec(x);
  return m ? Number(m[1]) : undefined;
}

export function itemFacts(schema: Record<string, unknown>): ItemFacts {
  const facts: ItemFacts = {};
  const mpg = quantity(schema.fuelEfficiency, /mpg|miles per gallon/i);
  if (mpg && mpg.value > 0) facts.mpg = mpg.value;
  const engine = first(schema.vehicleEngine);
  const power = isRecord(engine) ? quantity(engine.enginePower, /hp|horsepower|^kw$|^kwt$/i) : undefined;
  if (power && power.value > 0)
    facts.horsepower = /^kwt?$/i.test(power.unit) ? power.value * 1.341 : power.value;
  const agg = first(schema.aggregateRating);
  if (isRecord(agg)) {
    const value = toNumber(agg.ratingValue);
    const best = toNumber(agg.bestRating) ?? 5; // schema.org's default scale is 1-5
    if (value !== undefined && best > 0 && value >= 0 && value <= best) facts.rating = (value / best) * 10;
  }
  for (const key of YEAR_KEYS) {
    const y = yearOf(schema[key]);
    if (y !== undefined) {
      facts.year = y;
      break;
    }
  }
  return facts;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/** How well the item's numbers satisfy an intent, 0..1; undefined when it has no such number. */
export function intentValue(intent: Intent, facts: ItemFacts): number | undefined {
  switch (intent) {
    case 'efficiency':
      return facts.mpg === undefined ? undefined : clamp01((facts.mpg - 10) / 35);
    case 'power':
      return facts.horsepower === undefined ? undefined : clamp01((facts.horsepower - 50) / 170);
    case 'rating':
      return facts.rating === undefined ? undefined : clamp01((facts.rating - 5) / 4);
    case 'recent':
      return facts.year === undefined ? undefined : clamp01((facts.year - 1950) / 75);
    case 'old':
      return facts.year === undefined ? undefined : 1 - clamp01((facts.year - 1950) / 75);
  }
}

const round1 = (x: number): string => String(Math.round(x * 10) / 10);

/** The number behind an intent, for descriptions: "44.6 mpg", "130 hp", "rated 7.3/10", "1985". */
export function intentEvidence(intent: Intent, facts: ItemFacts): string | undefined {
  switch (intent) {
    case 'efficiency':
      return facts.mpg === undefined ? undefined : `${round1(facts.mpg)} mpg`;
    case 'power':
      return facts.horsepower === undefined ? undefined : `${Math.round(facts.horsepower)} hp`;
    case 'rating':
      return facts.rating === undefined ? undefined : `rated ${round1(facts.rating)}/10`;
    case 'recent':
    case 'old':
      return facts.year === undefined ? undefined : String(facts.year);
  }
}
