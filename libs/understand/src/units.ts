/**
 * Units of measure: how data and questions write them, what they measure, and how to convert
 * them to one canonical unit per dimension. This is physics and money, not any site's
 * vocabulary: it lets "heavier than 6 kg" meet a body mass in grams, and "over 2 hours" a
 * running time in minutes.
 */

export type Dimension =
  | 'mass'
  | 'length'
  | 'time'
  | 'money'
  | 'percent'
  | 'fuel economy'
  | 'power'
  | 'volume'
  | 'speed'
  | 'temperature'
  | 'energy'
  | 'area'
  | 'data'
  | 'price level'
  | 'rating'
  | 'count';

export interface Unit {
  /** The canonical unit of its dimension it converts to. */
  canonical: string;
  dimension: Dimension;
  /** Multiply by this to get the canonical unit (ignored when `inverse` is set). */
  factor: number;
  /** canonical = inverse / value (litres per 100 km → miles per gallon). */
  inverse?: number;
  /** How it is written: symbols first, then names (lowercase; plurals listed). */
  spellings: string[];
}

const u = (dimension: Dimension, canonical: string, factor: number, spellings: string): Unit => ({
  dimension,
  canonical,
  factor,
  spellings: spellings.split('|'),
});

/** Every unit askbus reads. The first spelling of a canonical unit is how it is shown. */
export const UNITS: readonly Unit[] = [
  u('mass', 'g', 1, 'g|gr|gm|gram|grams|gramme|grammes'),
  u('mass', 'g', 1000, 'kg|kgs|kilo|kilos|kilogram|kilograms'),
  u('mass', 'g', 0.001, 'mg|milligram|milligrams'),
  u('mass', 'g', 453.59237, 'lb|lbs|pound|pounds'),
  u('mass', 'g', 28.349523, 'oz|ounce|ounces'),
  u('mass', 'g', 1e6, 't|tonne|tonnes|metric ton|metric tons'),
  u('mass', 'g', 907184.74, 'ton|tons|short ton|short tons'),
  u('length', 'm', 0.001, 'mm|millimeter|millimeters|millimetre|millimetres'),
  u('length', 'm', 0.01, 'cm|centimeter|centimeters|centimetre|centimetres'),
  u('length', 'm', 1, 'm|meter|meters|metre|metres'),
  u('length', 'm', 1000, 'km|kilometer|kilometers|kilometre|kilometres'),
  u('length', 'm', 0.0254, 'in|inch|inches'),
  u('length', 'm', 0.3048, 'ft|foot|feet'),
  u('length', 'm', 0.9144, 'yd|yard|yards'),
  u('length', 'm', 1609.344, 'mi|mile|miles'),
  u('time', 'min', 1 / 60, 's|sec|secs|second|seconds'),
  u('time', 'min', 1, 'min|mins|minute|minutes'),
  u('time', 'min', 60, 'h|hr|hrs|hour|hours'),
  u('time', 'min', 1440, 'd|day|days'),
  u('time', 'min', 10080, 'wk|week|weeks'),
  // calendar spans as lengths of time ("24 months of experience", "2 years"): on average
  u('time', 'min', 43830, 'month|months|mo|mos'),
  u('time', 'min', 525960, 'year|years|yr|yrs'),
  u('money', 'USD', 1, 'USD|$|us$|usd|dollar|dollars|buck|bucks'),
  u('money', 'EUR', 1, 'EUR|€|eur|euro|euros'),
  u('money', 'GBP', 1, 'GBP|£|gbp|pound sterling|pounds sterling'),
  u('money', 'JPY', 1, 'JPY|¥|jpy|yen'),
  u('percent', '%', 1, '%|percent|per cent|pct|percentage'),
  u('fuel economy', 'mpg', 1, 'mpg|miles per gallon|mi/gal'),
  u('fuel economy', 'mpg', 2.352146, 'km/l|kilometers per liter|kilometres per litre'),
  {
    dimension: 'fuel economy',
    canonical: 'mpg',
    factor: 1,
    inverse: 235.214583,
    spellings: ['l/100km', 'l/100 km'],
  },
  u('power', 'hp', 1, 'hp|bhp|horsepower|horse power'),
  u('power', 'hp', 1.341022, 'kw|kilowatt|kilowatts'),
  u('power', 'hp', 0.001341022, 'w|watt|watts'),
  u('power', 'hp', 0.98632, 'ps|metric horsepower'),
  u('volume', 'l', 1, 'l|liter|liters|litre|litres'),
  u('volume', 'l', 0.001, 'ml|milliliter|milliliters|cc|cm3|cubic centimeters'),
  u('volume', 'l', 0.016387064, 'cu in|cubic inch|cubic inches|ci'),
  u('volume', 'l', 3.785411784, 'gal|gallon|gallons'),
  u('speed', 'km/h', 1, 'km/h|kph|kmh|kilometers per hour|kilometres per hour'),
  u('speed', 'km/h', 1.609344, 'mph|miles per hour'),
  u('speed', 'km/h', 3.6, 'm/s|meters per second|metres per second'),
  u('speed', 'km/h', 1.852, 'kn|kt|knot|knots'),
  u('temperature', '°C', 1, '°c|c|celsius|degrees celsius'),
  // food energy: "calories" on a label are kilocalories
  u('energy', 'kcal', 1, 'kcal|cal|calorie|calories|kilocalorie|kilocalories'),
  u('energy', 'kcal', 0.239005736, 'kj|kilojoule|kilojoules'),
  u('energy', 'kcal', 0.000239005736, 'joule|joules'),
  u('area', 'm²', 1, 'm²|m2|sq m|sqm|square meter|square meters|square metre|square metres'),
  u('area', 'm²', 0.09290304, 'sq ft|sqft|ft²|ft2|square foot|square feet'),
  u('area', 'm²', 0.00064516, 'sq in|square inch|square inches'),
  u('area', 'm²', 1e6, 'km²|km2|sq km|square kilometer|square kilometers|square kilometre|square kilometres'),
  u('area', 'm²', 2589988.110336, 'sq mi|square mile|square miles'),
  u('area', 'm²', 4046.8564224, 'acre|acres'),
  u('area', 'm²', 10000, 'ha|hectare|hectares'),
  // amounts of data in decimal units, as app stores and downloads write them; the binary ones too
  u('data', 'MB', 1, 'MB|megabyte|megabytes'),
  u('data', 'MB', 0.001, 'KB|kilobyte|kilobytes'),
  u('data', 'MB', 1000, 'GB|gigabyte|gigabytes'),
  u('data', 'MB', 1e6, 'TB|terabyte|terabytes'),
  u('data', 'MB', 1e-6, 'byte|bytes'),
  u('data', 'MB', 0.001024, 'KiB|kibibyte|kibibytes'),
  u('data', 'MB', 1.048576, 'MiB|mebibyte|mebibytes'),
  u('data', 'MB', 1073.741824, 'GiB|gibibyte|gibibytes'),
];

/**
 * Words that name each dimension as a quantity ("weight" is what heavy things have much of):
 * what a property's unit lets it answer to besides its own name.
 */
export const DIMENSION_WORDS: Readonly<Record<Dimension, readonly string[]>> = {
  mass: ['mass', 'weight'],
  length: ['length', 'distance'],
  time: ['duration', 'time', 'length'],
  money: ['money', 'amount'],
  percent: ['percentage'],
  'fuel economy': ['fuel economy', 'mileage', 'fuel efficiency', 'efficiency'],
  power: ['power'],
  volume: ['volume', 'capacity'],
  speed: ['speed', 'velocity'],
  temperature: ['temperature'],
  energy: ['energy'],
  area: ['area', 'size', 'surface'],
  data: ['size', 'storage'],
  'price level': ['price level', 'price'],
  rating: ['rating', 'score'],
  count: ['number', 'count'],
};

/** UN/CEFACT codes schema.org's `unitCode` uses, for the units above. */
const UNIT_CODES: Record<string, string> = {
  GRM: 'g',
  KGM: 'kg',
  LBR: 'lb',
  MGM: 'mg',
  ONZ: 'oz',
  TNE: 't',
  MMT: 'mm',
  CMT: 'cm',
  MTR: 'm',
  KMT: 'km',
  INH: 'in',
  FOT: 'ft',
  SMI: 'mi',
  SEC: 's',
  MIN: 'min',
  HUR: 'h',
  DAY: 'd',
  KWT: 'kw',
  WTT: 'w',
  HP: 'hp',
  BHP: 'bhp',
  LTR: 'l',
  MLT: 'ml',
  GLL: 'gal',
  KMH: 'km/h',
  HM: 'mph',
  P1: '%',
  CEL: '°c',
  MTK: 'm²',
  FTK: 'sq ft',
  INK: 'sq in',
  KMK: 'km²',
  MIK: 'sq mi',
  ACR: 'acre',
  HAR: 'ha',
  AD: 'byte',
  '2P': 'KB',
  '4L': 'MB',
  E34: 'GB',
  E35: 'TB',
};

const BY_SPELLING = new Map<string, Unit>();
for (const unit of UNITS)
  for (const s of unit.spellings)
    if (!BY_SPELLING.has(s.toLowerCase())) BY_SPELLING.set(s.toLowerCase(), unit);

/** Longest spelling in words, so a question can be scanned for units. */
export const MAX_UNIT_WORDS = Math.max(...UNITS.flatMap((x) => x.spellings.map((s) => s.split(' ').length)));

/** The unit a piece of text names ("lbs", "Kilograms", "KGM", "$"), or undefined. */
export function unitOf(text: string | undefined): Unit | undefined {
  if (!text) return undefined;
  const t = text.trim();
  if (t === '') return undefined;
  const code = Object.hasOwn(UNIT_CODES, t) ? UNIT_CODES[t] : undefined;
  return BY_SPELLING.get(t.toLowerCase()) ?? (code ? BY_SPELLING.get(code.toLowerCase()) : undefined);
}

/** A value in a unit, converted to its dimension's canonical unit. */
export function toCanonical(value: number, unit: Unit): number {
  if (unit.inverse !== undefined) return value === 0 ? 0 : unit.inverse / value;
  return value * unit.factor;
}

/** The spelling a canonical unit is shown with. */
export function canonicalUnit(canonical: string): Unit | undefined {
  return UNITS.find((x) => x.canonical === canonical && x.factor === 1 && x.inverse === undefined);
}
