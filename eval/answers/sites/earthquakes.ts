/**
 * The `earthquakes` site: vega-datasets earthquakes.json (the USGS feed of one week, 31 January
 * to 7 February 2018, 1,707 GeoJSON features) as schema.org `Event`s: USGS's title as the name,
 * its event page as the url, the start time, the place with its region and coordinates, and the
 * magnitude, depth (km), felt reports, significance and event type as `PropertyValue`s.
 */
import { z } from 'zod';
import { readVegaDataset } from '@askbus/demo-data';
import type { EvalRecord, EvalSite } from './site';

export const EARTHQUAKES_SITE = 'earthquakes';

const num = z.number().finite().nullable().optional().catch(null);

export const QuakeFeature = z.object({
  id: z.string().min(1),
  properties: z.object({
    mag: num,
    place: z.string().min(1),
    time: z.number().finite(),
    url: z.url(),
    title: z.string().min(1),
    felt: num,
    tsunami: num,
    sig: num,
    alert: z.string().nullable().optional().catch(null),
    magType: z.string().nullable().optional().catch(null),
    type: z.string().min(1),
  }),
  geometry: z.object({ coordinates: z.tuple([z.number(), z.number(), z.number()]) }),
});
export type QuakeFeature = z.infer<typeof QuakeFeature>;

/** USGS abbreviates a few regions at the end of a place: "4km W of Castaic, CA". */
const REGIONS: Record<string, string> = { CA: 'California', NV: 'Nevada', MX: 'Mexico' };

/** "21km SSE of Progreso, B.C., MX" → "Mexico"; a place without a comma is its own region. */
export function regionOf(place: string): string {
  const last = place.split(', ').at(-1)!.trim();
  return REGIONS[last] ?? last;
}

const when = (ms: number): string =>
  new Date(ms).toLocaleString('en-US', {
    timeZone: 'UTC',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  });

function toEvent(f: QuakeFeature): Record<string, unknown> {
  const p = f.properties;
  const [longitude, latitude, depth] = f.geometry.coordinates;
  const region = regionOf(p.place);
  const value = (name: string, v: unknown, extra: Record<string, unknown> = {}) =>
    v === null || v === undefined ? [] : [{ '@type': 'PropertyValue', name, value: v, ...extra }];
  const what = p.type === 'earthquake' ? 'earthquake' : p.type;
  const description =
    `${p.mag !== null && p.mag !== undefined ? `Magnitude ${p.mag.toFixed(1)} ` : ''}${what} ${p.place}, ` +
    `${depth.toLocaleString('en-US', { maximumFractionDigits: 1 })} km deep, on ${when(p.time)} UTC` +
    (p.felt ? `; felt by ${p.felt} ${p.felt === 1 ? 'person' : 'people'}.` : '.');
  return {
    '@context': 'https://schema.org',
    '@type': 'Event',
    url: p.url,
    identifier: f.id,
    name: p.title,
    description,
    startDate: new Date(p.time).toISOString(),
    location: {
      '@type': 'Place',
      name: p.place,
      address: { '@type': 'PostalAddress', addressRegion: region },
      geo: { '@type': 'GeoCoordinates', latitude, longitude },
    },
    additionalProperty: [
      ...value('magnitude', p.mag, p.magType ? { measurementTechnique: p.magType } : {}),
      { '@type': 'PropertyValue', name: 'depth', value: depth, unitText: 'km', unitCode: 'KMT' },
      { '@type': 'PropertyValue', name: 'event type', value: p.type },
      ...value('felt reports', p.felt),
      ...value('significance', p.sig),
      ...value('alert level', p.alert),
      ...(p.tsunami ? [{ '@type': 'PropertyValue', name: 'tsunami flag', value: true }] : []),
    ],
  };
}

export function earthquakesSite(): EvalSite {
  const collection = z.object({ features: z.array(z.unknown()) }).parse(readVegaDataset('earthquakes.json'));
  const records: EvalRecord[] = [];
  const items: Array<Record<string, unknown>> = [];
  for (const raw of collection.features) {
    const f = QuakeFeature.safeParse(raw);
    if (!f.success) continue;
    items.push(toEvent(f.data));
    records.push({
      url: f.data.properties.url,
      name: f.data.properties.title,
      row: raw as Record<string, unknown>,
    });
  }
  return { site: EARTHQUAKES_SITE, records, items };
}
