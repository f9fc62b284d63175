import { z } from 'zod';
import type { StoredItem } from '@askbus/contracts';
import type { Conversion } from './movies';
import { formatNumber, slugify, uniqueUrls } from './text';

export const CARS_SITE = 'cars';
const CARS_BASE_URL = 'https://cars.askbus.example/car/';

const num = z.number().finite().nullable().optional().catch(null);
const str = z.string().nullable().optional().catch(null);

/** One row of vega-datasets' data/cars.json. */
export const CarRecord = z.object({
  Name: str,
  Miles_per_Gallon: num,
  Cylinders: num,
  Displacement: num,
  Horsepower: num,
  Weight_in_lbs: num,
  Acceleration: num,
  Year: z.union([z.string(), z.number()]).nullable().optional().catch(null),
  Origin: str,
});
export type CarRecord = z.infer<typeof CarRecord>;

interface Brand {
  name: string;
  country: string;
}

/** Brands by the first word of a name, typos and nicknames in the data included. */
const BRANDS: Record<string, Brand> = {};
const brand = (country: string, name: string, ...words: string[]): void => {
  for (const w of [name.toLowerCase(), ...words]) BRANDS[w] = { name, country };
};
brand('United States', 'AMC');
brand('United States', 'Buick');
brand('United States', 'Cadillac');
brand('United States', 'Chevrolet', 'chevy', 'chevroelt');
brand('United States', 'Chrysler');
brand('United States', 'Dodge');
brand('United States', 'Ford');
brand('United States', 'International Harvester', 'hi', 'ih');
brand('United States', 'Mercury', 'capri'); // "capri ii": Mercury sold the Capri in the US
brand('United States', 'Oldsmobile');
brand('United States', 'Plymouth');
brand('United States', 'Pontiac');
brand('Germany', 'Audi');
brand('Germany', 'BMW');
brand('Germany', 'Mercedes-Benz', 'mercedes');
brand('Germany', 'Opel');
brand('Germany', 'Volkswagen', 'vw', 'vokswagen');
brand('France', 'Citroën', 'citroen');
brand('France', 'Peugeot');
brand('France', 'Renault');
brand('Italy', 'Fiat');
brand('Sweden', 'Saab');
brand('Sweden', 'Volvo');
brand('United Kingdom', 'Triumph');
brand('Japan', 'Datsun');
brand('Japan', 'Honda');
brand('Japan', 'Mazda', 'maxda');
brand('Japan', 'Nissan');
brand('Japan', 'Subaru');
brand('Japan', 'Toyota', 'toyouta');

/** Model words written in capitals: trim levels, "(sw)" station wagon, roman numerals. */
const UPPER_WORDS = new Set(
  'sst dpl se ls ltd gt gtl gs gl gle dl lx xe sx sj lj tc sw ii iii glc gx cvcc'.split(' '),
);
/** Known damage in the data: a find-and-replace turned "acc" into "Acceleration" ("honda accord"). */
const NAME_FIXES: Array<[RegExp, string]> = [
  [/accelerationord/gi, 'accord'],
  [/ @ /g, ' & '],
];

function titleWord(word: string): string {
  const parts = /^(\W*)(.*?)(\W*)$/.exec(word);
  const [, pre = '', core = '', post = ''] = parts ?? [];
  if (!core) return word;
  // codes such as "ds-21", "280s", "rx-7", "d/l" are capitals; "2-door" is a word
  const upper = UPPER_WORDS.has(core) || core.includes('/') || (/\d/.test(core) && !/[a-z]{4}/.test(core));
  return pre + (upper ? core.toUpperCase() : core[0]!.toUpperCase() + core.slice(1)) + post;
}

/** "vw rabbit c (diesel)" → brand Volkswagen, model "Rabbit C (Diesel)". */
export function parseCarName(raw: string): { brand: Brand; model: string; name: string } {
  let text = raw.replace(/\s+/g, ' ').trim();
  for (const [re, to] of NAME_FIXES) text = text.replace(re, to);
  const words = text.toLowerCase().split(' ');
  const first = words.shift() ?? '';
  const known = BRANDS[first];
  // "mercedes benz 300d": the brand's second word is not part of the model
  if (known?.name === 'Mercedes-Benz' && words[0] === 'benz') words.shift();
  // "capri ii": the first word was the model, not the brand
  if (first === 'capri') words.unshift('capri');
  const b = known ?? { name: titleWord(first), country: '' };
  const model = words.map(titleWord).join(' ');
  return { brand: b, model, name: model ? `${b.name} ${model}` : b.name };
}

const ORIGIN_PHRASE: Record<string, string> = { USA: 'the USA', Europe: 'Europe', Japan: 'Japan' };

function toCar(
  row: CarRecord,
  parsed: ReturnType<typeof parseCarName>,
  year: string | undefined,
  url: string,
): StoredItem {
  const { brand: b, model, name } = parsed;
  const origin = row.Origin?.trim() || undefined;
  const lower = name.toLowerCase();
  const bodyType = /\(sw\)|wagon/.test(lower)
    ? 'station wagon'
    : /pickup/.test(lower)
      ? 'pickup truck'
      : undefined;
  const fuelType = /diesel/.test(lower) ? 'diesel' : undefined;
  const transmission = /\(auto\)/.test(lower) ? 'automatic' : /\(man\)/.test(lower) ? 'manual' : undefined;
  const qv = (value: number, unitText: string, extra: Record<string, unknown> = {}) => ({
    '@type': 'QuantitativeValue',
    value,
    unitText,
    ...extra,
  });
  const has = (v: number | null | undefined): v is number => v !== null && v !== undefined && v > 0;

  const engine: Record<string, unknown> = { '@type': 'EngineSpecification' };
  if (has(row.Displacement)) engine.engineDisplacement = qv(row.Displacement, 'cu in');
  if (has(row.Horsepower)) engine.enginePower = qv(row.Horsepower, 'hp');
  if (fuelType) engine.fuelType = fuelType;

  const properties: Array<Record<string, unknown>> = [];
  if (has(row.Cylinders))
    properties.push({ '@type': 'PropertyValue', name: 'number of cylinders', value: row.Cylinders });
  if (b.country) properties.push({ '@type': 'PropertyValue', name: 'brand country', value: b.country });

  const schema: Record<string, unknown> = {
    '@context': 'https://schema.org',
    '@type': 'Car',
    url,
    name,
    brand: { '@type': 'Brand', name: b.name },
    description: describeCar(row, name, year, origin, b.country, bodyType),
  };
  if (model) schema.model = model;
  if (year) schema.vehicleModelDate = year;
  if (origin) schema.countryOfOrigin = { '@type': 'Country', name: origin };
  if (bodyType) schema.bodyType = bodyType;
  if (transmission) schema.vehicleTransmission = transmission;
  if (has(row.Miles_per_Gallon)) schema.fuelEfficiency = qv(row.Miles_per_Gallon, 'mpg');
  if (Object.keys(engine).length > 1) schema.vehicleEngine = engine;
  if (has(row.Weight_in_lbs)) schema.weight = qv(row.Weight_in_lbs, 'lb');
  if (has(row.Acceleration)) {
    schema.accelerationTime = qv(row.Acceleration, 's', { description: '0 to 60 mph' });
  }
  if (properties.length) schema.additionalProperty = properties;
  return { url, name, site: CARS_SITE, '@type': 'Car', schema_object: schema };
}

/** "1982 Honda Civic from Japan: 4 cylinders, 91 cu in, 67 hp, 38 mpg, 1,965 lb, 0-60 mph in 15 s." */
function describeCar(
  row: CarRecord,
  name: string,
  year: string | undefined,
  origin: string | undefined,
  brandCountry: string,
  bodyType: string | undefined,
): string {
  let s = `${year ? `${year} ` : ''}${name}${bodyType ? `, a ${bodyType},` : ''}`;
  if (origin) {
    s += ` from ${ORIGIN_PHRASE[origin] ?? origin}`;
    if (origin === 'Europe' && brandCountry) s += ` (${brandCountry})`;
  }
  const n = (v: number | null | undefined, unit: string) =>
    v !== null && v !== undefined && v > 0 ? `${formatNumber(v)} ${unit}` : undefined;
  const details = [
    n(row.Cylinders, 'cylinders'),
    n(row.Displacement, 'cu in'),
    n(row.Horsepower, 'hp'),
    n(row.Miles_per_Gallon, 'mpg'),
    n(row.Weight_in_lbs, 'lb'),
    row.Acceleration ? `0-60 mph in ${formatNumber(row.Acceleration)} s` : undefined,
  ].filter(Boolean);
  return `${s}${details.length ? `: ${details.join(', ')}` : ''}.`;
}

/** "1970-01-01" or 1970 → "1970". */
function modelYear(value: string | number | null | undefined): string | undefined {
  const m = /^\s*(\d{4})/.exec(String(value ?? ''));
  return m ? m[1] : undefined;
}

/**
 * vega-datasets cars.json rows → schema.org Car items of site `cars`. Rows that are not
 * objects or have no name are skipped and counted. URLs are
 * https://cars.askbus.example/car/<name-slug>-<year>, "-2", "-3" … for repeats.
 */
export function convertCars(rows: unknown): Conversion {
  const list = z.array(z.unknown()).parse(rows);
  const url = uniqueUrls();
  const items: StoredItem[] = [];
  let skipped = 0;
  for (const raw of list) {
    const row = CarRecord.safeParse(raw);
    if (!row.success || !row.data.Name?.trim()) {
      skipped++;
      continue;
    }
    const parsed = parseCarName(row.data.Name);
    const year = modelYear(row.data.Year);
    items.push(
      toCar(row.data, parsed, year, url(`${CARS_BASE_URL}${slugify(parsed.name)}${year ? `-${year}` : ''}`)),
    );
  }
  return { items, skipped };
}
