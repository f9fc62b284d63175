import { describe, expect, it } from 'vitest';
import { StoredItem } from '@askbus/contracts';
import {
  convertCars,
  convertMovies,
  loadDemoSites,
  movieTitle,
  parseCarName,
  parseReleaseDate,
  repairMojibake,
  slugify,
} from './index';

describe('loadDemoSites', () => {
  const sites = loadDemoSites();
  const movies = sites.find((s) => s.site === 'movies')!;
  const cars = sites.find((s) => s.site === 'cars')!;

  it('converts every usable row of movies.json and cars.json, counting the rest', () => {
    expect(sites.map((s) => s.site)).toEqual(['movies', 'cars']);
    // 3,201 movie rows, one of them without a title; 406 car rows
    expect(movies.items.length + movies.skipped).toBe(3201);
    expect(movies.skipped).toBe(1);
    expect(cars.items.length).toBe(406);
    expect(cars.skipped).toBe(0);
  });

  it('produces only valid StoredItems with unique, stable URLs', () => {
    const all = sites.flatMap((s) => s.items);
    expect(all).toHaveLength(3606);
    for (const item of all) {
      const parsed = StoredItem.safeParse(item);
      if (!parsed.success) throw new Error(`${item.url}: ${parsed.error.message}`);
    }
    expect(new Set(all.map((i) => i.url)).size).toBe(all.length);
    expect(loadDemoSites()[0]!.items.map((i) => i.url)).toEqual(movies.items.map((i) => i.url));
    for (const item of all) {
      expect(item.schema_object['@context']).toBe('https://schema.org');
      expect(item.schema_object['@type']).toBe(item['@type']);
      expect(item.schema_object.url).toBe(item.url);
      expect(typeof item.schema_object.description).toBe('string');
    }
  });

  it('builds a schema.org Movie from a full row', () => {
    const pale = movies.items.find((i) => i.name === 'Pale Rider')!;
    expect(pale.url).toBe('https://movies.askbus.example/movie/pale-rider-1985');
    expect(pale.site).toBe('movies');
    expect(pale.schema_object).toMatchObject({
      '@type': 'Movie',
      director: { '@type': 'Person', name: 'Clint Eastwood' },
      genre: ['Western', 'Historical Fiction'],
      datePublished: '1985-06-28',
      productionCompany: { '@type': 'Organization', name: 'Warner Bros.' },
      aggregateRating: { '@type': 'AggregateRating', ratingValue: 7.1, bestRating: 10 },
    });
    expect(pale.schema_object.description).toMatch(
      /^Pale Rider is a 1985 Western movie .*directed by Clint Eastwood/,
    );
    expect(pale.schema_object.additionalProperty).toContainEqual({
      '@type': 'PropertyValue',
      name: 'production budget',
      value: 6_900_000,
      unitText: 'USD',
    });
  });

  it('keeps numeric titles as text and fixes misread titles and years', () => {
    expect(movies.items.find((i) => i.name === '1776')).toBeDefined();
    expect(movies.items.find((i) => i.name === 'Léon')).toBeDefined();
    const gwtw = movies.items.find((i) => i.name === 'Gone with the Wind')!;
    expect(gwtw.schema_object.datePublished).toBe('1939-12-15');
    expect(movies.items.find((i) => i.name === 'The Charge of the Light Brigade')).toBeDefined();
  });

  it('builds a schema.org Car with brand, origin and numbers', () => {
    const civic = cars.items.find((i) => i.url === 'https://cars.askbus.example/car/honda-civic-1974')!;
    expect(civic.schema_object).toMatchObject({
      '@type': 'Car',
      name: 'Honda Civic',
      brand: { '@type': 'Brand', name: 'Honda' },
      vehicleModelDate: '1974',
      countryOfOrigin: { '@type': 'Country', name: 'Japan' },
      fuelEfficiency: { '@type': 'QuantitativeValue', value: 24, unitText: 'mpg' },
      vehicleEngine: { '@type': 'EngineSpecification', enginePower: { value: 97, unitText: 'hp' } },
      weight: { value: 2489, unitText: 'lb' },
      accelerationTime: { value: 15 },
    });
    // repeated name and year: the second gets a suffix
    expect(
      cars.items
        .filter((i) => i.url.startsWith('https://cars.askbus.example/car/ford-pinto-1975'))
        .map((i) => i.url),
    ).toEqual([
      'https://cars.askbus.example/car/ford-pinto-1975',
      'https://cars.askbus.example/car/ford-pinto-1975-2',
    ]);
    // no car keeps a misspelt or nicknamed brand
    const brands = new Set(cars.items.map((i) => (i.schema_object.brand as { name: string }).name));
    for (const bad of [
      'Chevy',
      'Vw',
      'Toyouta',
      'Maxda',
      'Chevroelt',
      'Vokswagen',
      'Mercedes',
      'Hi',
      'Capri',
    ]) {
      expect(brands).not.toContain(bad);
    }
  });
});

describe('converters on odd rows', () => {
  it('skips rows without a title or that are not objects, and survives nulls and wrong types', () => {
    const { items, skipped } = convertMovies([
      { Title: null },
      { Title: '   ' },
      'not a row',
      null,
      { Title: 42, 'Release Date': 'garbage', 'IMDB Rating': 'high', Director: 7, 'Major Genre': null },
      { Title: 42 },
    ]);
    expect(skipped).toBe(4);
    expect(items.map((i) => [i.name, i.url])).toEqual([
      ['42', 'https://movies.askbus.example/movie/42'],
      ['42', 'https://movies.askbus.example/movie/42-2'],
    ]);
    expect(items[0]!.schema_object).not.toHaveProperty('director');
    expect(items[0]!.schema_object).not.toHaveProperty('aggregateRating');
    for (const item of items) expect(StoredItem.safeParse(item).success).toBe(true);
    expect(() => convertMovies({ not: 'an array' })).toThrow();
  });

  it('skips nameless cars and leaves out missing numbers', () => {
    const { items, skipped } = convertCars([
      { Name: '' },
      {
        Name: 'vw rabbit c (diesel)',
        Miles_per_Gallon: null,
        Horsepower: null,
        Year: '1980-01-01',
        Origin: 'Europe',
      },
    ]);
    expect(skipped).toBe(1);
    expect(items).toHaveLength(1);
    const car = items[0]!;
    expect(car.name).toBe('Volkswagen Rabbit C (Diesel)');
    expect(car.schema_object).not.toHaveProperty('fuelEfficiency');
    expect(car.schema_object.description).toBe('1980 Volkswagen Rabbit C (Diesel) from Europe (Germany).');
  });
});

describe('helpers', () => {
  it('parses release dates, moving misread centuries back', () => {
    expect(parseReleaseDate('Jun 12 1998')).toBe('1998-06-12');
    expect(parseReleaseDate('Dec 15 2039')).toBe('1939-12-15');
    expect(parseReleaseDate('Feb 30 1998')).toBeUndefined();
    expect(parseReleaseDate(null)).toBeUndefined();
  });

  it('names movies and cars', () => {
    expect(movieTitle(1941)).toBe('1941');
    expect(movieTitle('Charge of the Light Brigade, The')).toBe('The Charge of the Light Brigade');
    expect(parseCarName('mercedes benz 300d').name).toBe('Mercedes-Benz 300D');
    expect(parseCarName('honda Accelerationord lx').name).toBe('Honda Accord LX');
    expect(parseCarName('capri ii').name).toBe('Mercury Capri II');
    expect(parseCarName('chrysler lebaron town @ country (sw)').name).toBe(
      'Chrysler Lebaron Town & Country (SW)',
    );
    expect(slugify('Déjà Vu & more!')).toBe('deja-vu-and-more');
  });

  it('repairs Mac Roman mojibake but leaves correct text alone', () => {
    expect(repairMojibake("Le Fabuleux destin d'AmÈlie Poulain")).toBe("Le Fabuleux destin d'Amélie Poulain");
    expect(repairMojibake('Per qualche dollaro in pi˘')).toBe('Per qualche dollaro in più');
    expect(repairMojibake('Amélie')).toBe('Amélie');
    expect(repairMojibake('Alien³')).toBe('Alien³');
  });
});
