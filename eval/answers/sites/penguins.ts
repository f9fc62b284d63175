/**
 * The `penguins` site: vega-datasets penguins.json (Palmer Station, 344 birds) as a field
 * station would publish it: one schema.org `Observation` per bird, its measurements as
 * `PropertyValue`s in `variableMeasured` with their units. Each bird is named by its species and
 * its number within the species ("Gentoo penguin 17").
 */
import { z } from 'zod';
import { readVegaDataset } from '@askbus/demo-data';
import type { EvalRecord, EvalSite } from './site';

export const PENGUINS_SITE = 'penguins';
const BASE_URL = 'https://penguins.askbus.example/observation/';

const num = z.number().finite().nullable().catch(null);
const str = z.string().nullable().catch(null);

export const PenguinRow = z.object({
  Species: z.string().min(1),
  Island: z.string().min(1),
  'Beak Length (mm)': num,
  'Beak Depth (mm)': num,
  'Flipper Length (mm)': num,
  'Body Mass (g)': num,
  Sex: str,
});
export type PenguinRow = z.infer<typeof PenguinRow>;

/** "MALE" → "male"; the data's "." and nulls are unknown. */
function sexOf(raw: string | null): string | undefined {
  const s = raw?.trim().toLowerCase();
  return s === 'male' || s === 'female' ? s : undefined;
}

const fmt = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

function toObservation(row: PenguinRow, name: string, url: string): Record<string, unknown> {
  const sex = sexOf(row.Sex);
  const measure = (label: string, value: number | null, unitText: string, unitCode: string) =>
    value === null ? [] : [{ '@type': 'PropertyValue', name: label, value, unitText, unitCode }];
  const mass = row['Body Mass (g)'];
  const flipper = row['Flipper Length (mm)'];
  const beakLength = row['Beak Length (mm)'];
  const beakDepth = row['Beak Depth (mm)'];
  const facts = [
    mass !== null ? `body mass ${fmt(mass)} g` : undefined,
    flipper !== null ? `flipper length ${fmt(flipper)} mm` : undefined,
    beakLength !== null ? `beak length ${fmt(beakLength)} mm` : undefined,
    beakDepth !== null ? `beak depth ${fmt(beakDepth)} mm` : undefined,
  ].filter(Boolean);
  const who = `${sex ? `${sex[0]!.toUpperCase()}${sex.slice(1)} ` : ''}${row.Species} penguin`;
  const description =
    `${who} observed on ${row.Island} island in the Palmer Archipelago, Antarctica` +
    (facts.length ? `: ${facts.join(', ')}.` : '; not measured.');
  return {
    '@context': 'https://schema.org',
    '@type': 'Observation',
    url,
    name,
    description,
    observationAbout: { '@type': 'Thing', name: `${row.Species} penguin` },
    variableMeasured: [
      { '@type': 'PropertyValue', name: 'species', value: row.Species },
      { '@type': 'PropertyValue', name: 'island', value: row.Island },
      ...(sex ? [{ '@type': 'PropertyValue', name: 'sex', value: sex }] : []),
      ...measure('beak length', beakLength, 'mm', 'MMT'),
      ...measure('beak depth', beakDepth, 'mm', 'MMT'),
      ...measure('flipper length', flipper, 'mm', 'MMT'),
      ...measure('body mass', mass, 'g', 'GRM'),
    ],
  };
}

export function penguinsSite(): EvalSite {
  const rows = z.array(z.unknown()).parse(readVegaDataset('penguins.json'));
  const perSpecies = new Map<string, number>();
  const records: EvalRecord[] = [];
  const items: Array<Record<string, unknown>> = [];
  for (const raw of rows) {
    const row = PenguinRow.safeParse(raw);
    if (!row.success) continue;
    const n = (perSpecies.get(row.data.Species) ?? 0) + 1;
    perSpecies.set(row.data.Species, n);
    const name = `${row.data.Species} penguin ${n}`;
    const url = `${BASE_URL}${row.data.Species.toLowerCase()}-${n}`;
    items.push(toObservation(row.data, name, url));
    records.push({ url, name, row: raw as Record<string, unknown> });
  }
  return { site: PENGUINS_SITE, records, items };
}
