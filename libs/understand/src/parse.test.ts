import { describe, expect, it } from 'vitest';
import type { Constraint, RangeConstraint, Understanding, ValueConstraint } from '@askbus/contracts';
import { SiteCatalog } from './catalog';
import { keyLabel } from './facts';
import { showQuantity } from './format';
import { SiteModel } from './model';
import { parseQuestion } from './parse';
import { testLexicon, testSite } from './testing';

const range = (u: Understanding, path: string): RangeConstraint | undefined =>
  u.constraints.find(
    (k): k is RangeConstraint => k.kind === 'range' && 'path' in k.target && k.target.path === path,
  );
const value = (u: Understanding, path: string): ValueConstraint | undefined =>
  u.constraints.find((k): k is ValueConstraint => k.kind === 'value' && k.path === path);
const order = (u: Understanding, path: string) =>
  u.orders.find((o) => 'path' in o.target && o.target.path === path);
const texts = (ks: readonly Constraint[]): string[] => ks.map((k) => k.text);

/**
 * A synthetic site of `count` items of one type, each `make(i)`'s fields under its own URL and
 * named `nameOf(i)`, in a catalog with its model; `ask` parses a question as the router does.
 */
function syntheticSite(
  site: string,
  type: string,
  count: number,
  make: (i: number) => Record<string, unknown>,
  nameOf: (i: number) => string = (i) => `Item ${i}`,
  now?: Date,
) {
  const catalog = new SiteCatalog(true);
  for (let i = 0; i < count; i++) {
    const url = `https://${site}.example/${i}`;
    catalog.add({
      url,
      name: nameOf(i),
      site,
      '@type': type,
      schema_object: { '@type': type, url, ...make(i) },
    });
  }
  const model = new SiteModel([catalog.profile(site)!], testLexicon());
  return {
    catalog,
    model,
    ask: (q: string) => parseQuestion(q, { model, names: [], ...(now ? { now } : {}) }),
  };
}

describe('parseQuestion on the demo movies', () => {
  const movies = testSite('movies');

  it('reads durations with units and numbers in words, and leaves the title words alone', () => {
    const u = movies.ask('movies longer than 2 and a half hours');
    expect(range(u, 'duration')).toMatchObject({ min: 150, minInclusive: false });
    expect(u.freeText).toBe('');
    expect(u.named).toEqual([]);
  });

  it('reads words whose WordNet relations are names of every object\'s properties ("built" → constructor)', () => {
    // the tables of English grammar were object literals: "constructor" found Object's, and threw
    for (const q of [
      'movies built in the 1990s',
      'constructor movies',
      'toString films from the valueOf decade',
    ])
      expect(() => movies.ask(q)).not.toThrow();
    expect(range(movies.ask('movies built in the 1990s'), 'datePublished')).toMatchObject({
      min: 1990,
      max: 2000,
    });
    expect(movies.ask('movies from constructor 1997').constraints).toHaveLength(1);
  });

  it('reads "the last 10 years" as a span to now', () => {
    const u = parseQuestion('movies from the last 10 years', {
      model: movies.model,
      names: [],
      now: new Date('2026-12-07T12:00:00Z'),
    });
    expect(range(u, 'datePublished')?.min).toBeCloseTo(2016.93, 2);
    expect(range(u, 'datePublished')?.max).toBeCloseTo(2026.93, 2);
  });

  it('reads decades on the release date, not on vote counts, with genres and a sort by rating', () => {
    const u = movies.ask('best rated dramas from the 90s');
    expect(range(u, 'datePublished')).toMatchObject({ min: 1990, max: 2000, maxInclusive: false });
    expect(value(u, 'genre')?.values).toEqual(['drama']);
    expect(order(u, 'aggregateRating')).toMatchObject({ direction: 'desc', strength: 'sort' });
    const eighties = movies.ask('scary horror movies from the eighties');
    expect(range(eighties, 'datePublished')).toMatchObject({ min: 1980, max: 1990 });
    expect(value(eighties, 'genre')?.values).toEqual(['horror']);
  });

  it('derives profit from gross and budget for flops and hits', () => {
    const flop = movies.ask('movies with a big budget that flopped');
    const loss = flop.constraints.find((k) => k.kind === 'range' && 'derived' in k.target) as RangeConstraint;
    expect(loss.target).toMatchObject({ derived: { op: 'difference' } });
    expect(loss.max).toBe(0);
    expect(order(flop, 'additionalProperty.production budget')?.direction).toBe('desc');
    expect(flop.named).toEqual([]); // "big" is not the film Big here
    const hit = movies.ask('low budget films that became hits');
    expect(
      (hit.constraints.find((k) => k.kind === 'range' && 'derived' in k.target) as RangeConstraint).min,
    ).toBe(0);
    expect(order(hit, 'additionalProperty.production budget')?.direction).toBe('asc');
  });

  it('relates words to values through WordNet: funny → Comedy, and keeps each required', () => {
    const u = movies.ask('funny films for kids');
    expect(
      u.constraints
        .filter((k) => k.kind === 'value')
        .map((k) => (k as ValueConstraint).values.concat(...(k as ValueConstraint).contains)),
    ).toEqual([['comedy'], ['kids']]);
  });

  it('reads money with scales and a content rating written with a number', () => {
    const u = movies.ask('PG-13 movies from the nineties under $10 million');
    expect(value(u, 'contentRating')?.values).toEqual(['pg-13']);
    expect(range(u, 'additionalProperty.production budget')).toMatchObject({ max: 10_000_000 });
    const billion = movies.ask('movies that grossed over a billion dollars');
    expect(range(billion, 'additionalProperty.worldwide gross')).toMatchObject({ min: 1e9 });
  });

  it('finds named items: the exact title, attribute questions, comparisons in several phrasings', () => {
    expect(movies.ask('Titanic').named.map((n) => n.name)).toEqual(['Titanic']);
    const who = movies.ask('who directed Jurassic Park');
    expect(who.intent).toBe('details');
    expect(who.named.map((n) => n.name)).toEqual(['Jurassic Park']);
    expect(who.asked).toContain('director');
    const long = movies.ask('how long is titanic');
    expect(long).toMatchObject({ intent: 'details', asked: ['duration'] });
    for (const q of [
      'which is better rated, Alien or Blade Runner',
      'compare Alien and Blade Runner',
      'Alien vs Blade Runner',
      'is Alien better than Blade Runner?',
    ]) {
      const u = movies.ask(q);
      expect(u.intent, q).toBe('compare');
      expect(
        u.named.map((n) => n.name),
        q,
      ).toEqual(['Alien', 'Blade Runner']);
    }
    expect(movies.ask('which is better rated, Alien or Blade Runner').asked).toEqual(['aggregateRating']);
  });

  it('says what it understood in words', () => {
    const u = movies.ask('westerns with clint eastwood');
    expect(texts(u.constraints)).toEqual(['in Western', 'directed by Clint Eastwood']);
  });
});

describe('parseQuestion on the demo cars', () => {
  const cars = testSite('cars');

  it('takes years alone for no running time ("less than 10 years old" is no acceleration time)', () => {
    expect(cars.ask('cars less than 10 years old').constraints).toEqual([]);
  });

  it('reads counts, parts of decades and a preference from an adjective', () => {
    const u = cars.ask('heavy 8-cylinder cars from the early 70s');
    expect(range(u, 'additionalProperty.number of cylinders')).toMatchObject({ min: 8, max: 8 });
    expect(range(u, 'vehicleModelDate')).toMatchObject({ min: 1970, max: 1974 });
    expect(order(u, 'weight')).toMatchObject({ direction: 'desc', strength: 'prefer' });
    expect(texts(u.constraints)).toEqual(['from 1970–1973', '8 cylinders']);
  });

  it('takes the property from the word and the direction from its meaning', () => {
    const light = cars.ask('lightweight cars with good mileage for city driving');
    expect(order(light, 'weight')?.direction).toBe('asc');
    expect(order(light, 'fuelEfficiency')?.direction).toBe('desc');
    expect(order(cars.ask('most powerful cars'), 'vehicleEngine.enginePower')).toMatchObject({
      direction: 'desc',
      strength: 'sort',
    });
    // quick is about speed: on a time, the least time first
    expect(order(cars.ask('quickest cars from japan'), 'accelerationTime')?.direction).toBe('asc');
    expect(order(cars.ask('economical cars'), 'fuelEfficiency')?.direction).toBe('desc');
  });

  it('converts units: pounds and tons to the site unit, and bounds on years', () => {
    const u = cars.ask('cars heavier than 4000 pounds');
    expect(range(u, 'weight')?.min).toBeCloseTo(4000 * 453.59237, 0);
    expect(range(cars.ask('cars under 2 tons'), 'weight')?.max).toBeCloseTo(2 * 907184.74, 0);
    const later = cars.ask('american cars from 1980 or later with at least 30 mpg');
    expect(range(later, 'vehicleModelDate')).toMatchObject({ min: 1980 });
    expect(range(later, 'vehicleModelDate')?.max).toBeUndefined();
    expect(range(later, 'fuelEfficiency')).toMatchObject({ min: 30, minInclusive: true });
    expect(later.constraints.some((k) => k.kind === 'value' && /usa|united states/i.test(k.text))).toBe(true);
  });
});

describe('parseQuestion on a site of another kind (penguins, loaded as PropertyValues)', () => {
  const penguins = testSite('penguins');

  it('learned the properties from PropertyValue names and unitText', () => {
    const mass = penguins.model.byPath.get('variableMeasured.body mass');
    expect(mass).toMatchObject({ kind: 'number', unit: 'g', dimension: 'mass' });
    expect(
      penguins.model.byPath
        .get('variableMeasured.species')
        ?.values?.map((v) => v.value)
        .sort(),
    ).toEqual(['Adelie', 'Chinstrap', 'Gentoo']);
  });

  it('reads species values, mass in grams or kilograms, islands and superlatives', () => {
    const u = penguins.ask('gentoo penguins heavier than 6000 grams');
    expect(value(u, 'variableMeasured.species')?.values).toEqual(['gentoo']);
    expect(range(u, 'variableMeasured.body mass')).toMatchObject({ min: 6000 });
    expect(range(penguins.ask('penguins over 5.5 kg'), 'variableMeasured.body mass')?.min).toBe(5500);
    const dream = penguins.ask('the heaviest penguins on Dream island');
    expect(value(dream, 'variableMeasured.island')?.values).toEqual(['dream']);
    expect(order(dream, 'variableMeasured.body mass')).toMatchObject({ direction: 'desc', strength: 'sort' });
    expect(dream.freeText).toBe('');
    expect(
      order(penguins.ask('penguins with the longest flippers'), 'variableMeasured.flipper length')?.direction,
    ).toBe('desc');
  });
});

describe('parseQuestion on two sides of one measure (a synthetic site of games)', () => {
  const catalog = new SiteCatalog(true);
  for (let i = 0; i < 200; i++) {
    catalog.add({
      url: `https://games.example/${i}`,
      name: `Team ${i % 7} v Team ${(i + 3) % 7}`,
      site: 'games',
      '@type': 'SportsEvent',
      schema_object: {
        '@type': 'SportsEvent',
        startDate: `2020-0${(i % 9) + 1}-1${i % 9}`,
        home_points: (i * 7) % 120,
        away_points: (i * 11) % 120,
      },
    });
  }
  const model = new SiteModel([catalog.profile('games')!], testLexicon());
  const ask = (q: string) => parseQuestion(q, { model, names: [] });

  it('totals the two sides, picks one side by its word, and reads a margin', () => {
    expect(ask('games with more than 200 points').constraints[0]).toMatchObject({
      target: { derived: { op: 'sum' } },
      min: 200,
    });
    expect(ask('games where the home team scored over 100 points').constraints[0]).toMatchObject({
      target: { path: 'home_points' },
      min: 100,
    });
    expect(ask('games decided by 30 points or more').constraints[0]).toMatchObject({
      target: { derived: { op: 'gap' } },
      min: 30,
    });
    expect(ask('the games with the most points').orders[0]).toMatchObject({
      target: { derived: { op: 'sum' } },
      strength: 'sort',
    });
  });
});

describe('parseQuestion on prices (synthetic shops: a currency declared, and none)', () => {
  const movies = testSite('movies');
  // prices in an Offer with its priceCurrency, beside a weight in kilograms
  const gear = syntheticSite('gear', 'Product', 120, (i) => ({
    category: ['Tent', 'Laptop', 'Kettle'][i % 3],
    weight: { '@type': 'QuantitativeValue', value: 0.5 + (i % 17), unitCode: 'KGM' },
    offers: { '@type': 'Offer', price: 20 + ((i * 37) % 2400), priceCurrency: 'USD', offerCount: i % 5 },
  }));
  // a price with no currency anywhere, beside a page count
  const books = syntheticSite('books', 'Book', 120, (i) => ({
    datePublished: `${1950 + ((i * 13) % 70)}-05-01`,
    numberOfPages: 90 + ((i * 53) % 1300),
    offers: { price: 4 + ((i * 7) % 56) },
  }));

  it('takes a sum written with a scale and no unit for the price, when it lies in its range', () => {
    expect(range(gear.ask('laptops under 1.5k'), 'offers.price')).toMatchObject({ max: 1500 });
    // beyond every price: not a price
    expect(range(gear.ask('laptops over 500k'), 'offers.price')).toBeUndefined();
    // a unit says otherwise
    expect(range(gear.ask('tents under 2k grams'), 'weight')).toMatchObject({ max: 2000 });
  });

  it('reads no price into "used" (a rare sense of the verb: use up, expend)', () => {
    expect(gear.ask('used laptops').orders).toEqual([]);
  });

  it('takes the count of a work\'s parts for its length when it has no length ("the longest book")', () => {
    expect(order(books.ask('the longest book'), 'numberOfPages')).toMatchObject({
      direction: 'desc',
      text: 'most pages',
    });
    expect(order(books.ask('short books'), 'numberOfPages')?.direction).toBe('asc');
    const q = 'which is longer, Item 3 or Item 8';
    const two = parseQuestion(q, {
      model: books.model,
      names: books.catalog.names.find(q, new Set(['books'])),
    });
    expect(two).toMatchObject({ intent: 'compare', asked: ['numberOfPages'] });
    // a site with a measure of length or time keeps it ("the longest movie" is its running time)
    expect(order(movies.ask('the longest movie'), 'numberOfPages')).toBeUndefined();
  });

  it('reads schema.org\'s "num" as "number of" ("numTracks")', () => {
    expect(keyLabel('numTracks').label).toBe('number of tracks');
  });

  it('takes the currency an Offer declares as the unit of its price, not of its other numbers', () => {
    const price = gear.catalog.profile('gear')!.properties.find((p) => p.path === 'offers.price');
    expect(price).toMatchObject({ dimension: 'money', unit: 'USD' });
    const count = gear.catalog.profile('gear')!.properties.find((p) => p.path === 'offers.offerCount');
    expect(count?.dimension).toBeUndefined();
  });

  it('bounds the price by a sum of money in any of its spellings', () => {
    for (const q of [
      'laptops under $800',
      'laptops that cost less than 800 dollars',
      'laptops under 800 USD',
    ]) {
      const u = gear.ask(q);
      expect(range(u, 'offers.price'), q).toMatchObject({ max: 800, maxInclusive: false });
      expect(value(u, 'category')?.values, q).toEqual(['laptop']);
    }
    expect(range(gear.ask('tents between 500 and 1000 dollars'), 'offers.price')).toMatchObject({
      min: 500,
      max: 1000,
    });
    // masses are held in grams
    expect(range(gear.ask('tents under 2 kg'), 'weight')).toMatchObject({ max: 2000 });
  });

  it('finds the property a verb is defined by ("weigh": have a certain weight)', () => {
    expect(range(gear.ask('tents that weigh less than 2 kg'), 'weight')).toMatchObject({ max: 2000 });
    const named = parseQuestion('how much does Item 4 weigh', {
      model: gear.model,
      names: gear.catalog.names.find('how much does Item 4 weigh', new Set(['gear'])),
    });
    expect(named.intent).toBe('details');
    expect(named.asked).toEqual(['weight']);
  });

  it('reads a price without a currency as money all the same (WordNet: a price is a cost)', () => {
    expect(range(books.ask('books under $20'), 'offers.price')).toMatchObject({ max: 20 });
    expect(range(books.ask('books that cost between 10 and 20 dollars'), 'offers.price')).toMatchObject({
      min: 10,
      max: 20,
    });
    const both = books.ask('books over 1000 pages under 30 dollars');
    expect(range(both, 'numberOfPages')).toMatchObject({ min: 1000 });
    expect(range(both, 'offers.price')).toMatchObject({ max: 30 });
    expect(order(books.ask('the cheapest books'), 'offers.price')?.direction).toBe('asc');
  });

  it('reads no preference into a word one far WordNet relation ties to a property', () => {
    // publish → issue, a sense of "number" (of pages) and of "cost" (of the price)
    const u = books.ask('books published between 1990 and 1995');
    expect(u.orders).toEqual([]);
    expect(order(books.ask('expensive books'), 'offers.price')?.direction).toBe('desc');
    expect(order(books.ask('books with the most pages'), 'numberOfPages')?.direction).toBe('desc');
  });
});

describe('parseQuestion on food energy (a synthetic site of recipes)', () => {
  const { ask } = syntheticSite(
    'recipes',
    'Recipe',
    120,
    (i) => ({
      totalTime: `PT${10 + ((i * 7) % 170)}M`,
      nutrition: {
        '@type': 'NutritionInformation',
        calories: `${80 + ((i * 97) % 1100)} calories`,
        fatContent: `${1 + ((i * 13) % 60)} g`,
      },
      recipeYield: `${2 + (i % 10)} servings`,
    }),
    (i) => `Recipe ${i}`,
  );

  it('bounds a property named by a word beside the comparator as the comparator says', () => {
    // "quick" runs against time, but "under" bounds the time itself
    expect(range(ask('quick recipes under 30 minutes'), 'totalTime')).toMatchObject({ max: 30 });
    expect(range(ask('fast recipes over 90 minutes'), 'totalTime')).toMatchObject({ min: 90 });
    expect(range(ask('recipes quicker than 30 minutes'), 'totalTime')).toMatchObject({ max: 30 });
  });

  it('reads a number before a noun that is no unit as a count, never as a measure', () => {
    // WordNet relates "people" to the masses, and mass to grams: still no fat content of 6 g,
    // but the site's one count written with a word of its own ("6 servings")
    const six = ask('recipes for 6 people');
    expect(range(six, 'nutrition.fatContent')).toBeUndefined();
    expect(range(six, 'recipeYield')).toMatchObject({ min: 6, max: 6 });
    expect(range(ask('a dinner for at least 8 guests'), 'recipeYield')).toMatchObject({ min: 8 });
    expect(range(ask('recipes for 2 kids'), 'recipeYield')).toMatchObject({ min: 2, max: 2 });
  });

  it('reads "N calories" as an amount of energy, in calories or kilojoules', () => {
    expect(range(ask('recipes with fewer than 300 calories'), 'nutrition.calories')).toMatchObject({
      max: 300,
    });
    expect(range(ask('recipes under 500 kcal'), 'nutrition.calories')).toMatchObject({ max: 500 });
    expect(range(ask('recipes under 2000 kJ'), 'nutrition.calories')?.max).toBeCloseTo(478, 0);
    expect(order(ask('low calorie recipes'), 'nutrition.calories')?.direction).toBe('asc');
    expect(range(ask('recipes that take less than an hour'), 'totalTime')).toMatchObject({ max: 60 });
  });

  it('reads "N servings" as a count its word names, and the verb of that word ("serve")', () => {
    expect(range(ask('recipes with more than 6 servings'), 'recipeYield')).toMatchObject({
      min: 6,
      minInclusive: false,
      text: 'recipe yield over 6 servings',
    });
    expect(range(ask('recipes that serve 4'), 'recipeYield')).toMatchObject({ min: 4, max: 4 });
    expect(range(ask('recipes that serve at least 8'), 'recipeYield')).toMatchObject({ min: 8 });
    // the items' own type after a number counts the answers, and names no property of theirs
    expect(ask('top 3 recipes').constraints).toEqual([]);
  });
});

describe('parseQuestion on pay (a synthetic site of job postings)', () => {
  const titles = ['Nurse', 'Teacher', 'Software Engineer', 'Mechanic'];
  const titleOf = (i: number) => `${titles[i % 4]} (${['Boston', 'Denver'][i % 2]})`;
  const { catalog, ask } = syntheticSite(
    'jobs',
    'JobPosting',
    120,
    (i) => ({
      title: titleOf(i),
      // schema.org's own example: an amount per year, its period written as the value's unitText
      baseSalary: {
        '@type': 'MonetaryAmount',
        currency: 'USD',
        value: { '@type': 'QuantitativeValue', value: 30_000 + ((i * 1_709) % 150_000), unitText: 'YEAR' },
      },
      experienceRequirements: {
        '@type': 'OccupationalExperienceRequirements',
        monthsOfExperience: [0, 6, 12, 24, 60][i % 5],
      },
      employmentType: ['FULL_TIME', 'PART_TIME', 'CONTRACTOR'][i % 3],
    }),
    titleOf,
  );
  const months = 'experienceRequirements.monthsOfExperience';

  it('reads a MonetaryAmount of a QuantitativeValue as money in its currency, not as years', () => {
    const salary = catalog.profile('jobs')!.properties.find((p) => p.path === 'baseSalary');
    expect(salary).toMatchObject({ kind: 'number', dimension: 'money', unit: 'USD' });
    expect(range(ask('jobs paying over $100k'), 'baseSalary')).toMatchObject({ min: 100_000 });
    expect(range(ask('jobs with a salary between 50000 and 80000 dollars'), 'baseSalary')).toMatchObject({
      min: 50_000,
      max: 80_000,
    });
    expect(order(ask('the highest paying jobs'), 'baseSalary')?.direction).toBe('desc');
  });

  it('keeps a first word the tagger takes for a command when it is a noun ("nurse jobs")', () => {
    expect(ask('nurse jobs').freeText).toContain('nurse');
  });

  it('reads a key that leads with a unit ("monthsOfExperience") in it, years and "a year" too', () => {
    const prop = catalog.profile('jobs')!.properties.find((p) => p.path === months);
    expect(prop).toMatchObject({ dimension: 'time', displayUnit: 'month' });
    expect(range(ask('jobs requiring at least 2 years of experience'), months)).toMatchObject({
      min: 2 * 525_960,
      text: 'months of experience at least 24 months',
    });
    expect(range(ask('jobs with less than a year of experience'), months)).toMatchObject({ max: 525_960 });
  });

  it('reads a constant ("FULL_TIME") by its words, not "full" as a preference for the time', () => {
    const u = ask('full time nurse jobs');
    expect(value(u, 'employmentType')).toMatchObject({
      values: ['full time'],
      text: 'employment type Full time',
    });
    expect(u.orders).toEqual([]);
    expect(value(ask('part-time jobs'), 'employmentType')?.values).toEqual(['part time']);
  });

  it('reads "no X" as X at 0 where some items have none', () => {
    expect(range(ask('jobs that need no experience'), months)).toMatchObject({ max: 0, maxInclusive: true });
    expect(range(ask('nurse jobs with no prior experience'), months)?.max).toBe(0);
    // every posting pays: "no salary" is nothing the data can tell
    expect(range(ask('jobs with no salary'), 'baseSalary')).toBeUndefined();
  });
});

describe('parseQuestion on schema.org enumerations (a synthetic site of events)', () => {
  const { catalog, ask } = syntheticSite(
    'events',
    'Event',
    60,
    (i) => ({
      startDate: `2027-0${(i % 9) + 1}-10T19:00:00+01:00`,
      // members of schema.org's enumerations, written as their URLs as schema.org's examples do
      eventAttendanceMode: `https://schema.org/${i % 3 ? 'Offline' : 'Online'}EventAttendanceMode`,
      offers: {
        '@type': 'Offer',
        price: 10 + i,
        priceCurrency: 'EUR',
        availability: 'https://schema.org/InStock',
      },
    }),
    (i) => `Evening ${i}`,
  );

  it('reads an enumeration member by its words and finds it by a word that tells the members apart', () => {
    const mode = catalog.profile('events')!.properties.find((p) => p.path === 'eventAttendanceMode');
    // the member's words, without the enumeration's name the property repeats
    expect(mode?.values?.map((v) => v.value).sort()).toEqual(['Offline', 'Online']);
    const availability = catalog.profile('events')!.properties.find((p) => p.path === 'offers.availability');
    expect(availability?.values?.map((v) => v.value)).toEqual(['In Stock']);
    expect(value(ask('online events'), 'eventAttendanceMode')?.values).toEqual(['online']);
    expect(range(ask('events under 20 euros'), 'offers.price')).toMatchObject({ max: 20 });
  });

  it('reads "free" (WordNet: costing nothing) as a price of 0, but not after a noun ("gluten free")', () => {
    expect(range(ask('free events'), 'offers.price')).toMatchObject({ max: 0, maxInclusive: true });
    expect(range(ask('events that are free'), 'offers.price')).toMatchObject({ max: 0 });
    expect(range(ask('gluten free events'), 'offers.price')).toBeUndefined();
  });
});

describe('parseQuestion on the calendar (a synthetic site of events around now)', () => {
  // Monday 7 December 2026; events from 20 November to 18 January, each with an end two hours on
  const now = new Date('2026-12-07T12:00:00Z');
  const { model, ask } = syntheticSite(
    'agenda',
    'Event',
    60,
    (i) => {
      const start = new Date(Date.UTC(2026, 10, 20 + i, 18));
      const end = new Date(start.getTime() + 2 * 3_600_000);
      const iso = (d: Date) => d.toISOString().slice(0, 16);
      // the end first, as a file may write it
      return { endDate: `${iso(end)}:00-05:00`, startDate: `${iso(start)}:00-05:00` };
    },
    (i) => `Evening ${i}`,
    now,
  );
  const days = (u: ReturnType<typeof ask>) => {
    const r = range(u, 'startDate')!;
    // back from a fractional year to the day it begins (rounded to the minute)
    const day = (y: number) =>
      new Date(Math.round((Date.UTC(2026, 0, 1) + (y - 2026) * 365 * 86_400_000) / 60_000) * 60_000)
        .toISOString()
        .slice(0, 10);
    return [day(r.min!), day(r.max!)];
  };

  it('takes the earlier of two dates the items carry alike (an event starts before it ends)', () => {
    expect(model.primaryDate?.path).toBe('startDate');
  });

  it('reads the weekend, a week and a month alone as whole spans of the calendar', () => {
    expect(days(ask('events this weekend'))).toEqual(['2026-12-12', '2026-12-14']);
    expect(range(ask('events this weekend'), 'startDate')?.text).toBe('this weekend');
    expect(days(ask('events next weekend'))).toEqual(['2026-12-19', '2026-12-21']);
    expect(days(ask('events next week'))).toEqual(['2026-12-14', '2026-12-21']);
    // a month alone: the one nearest now among the years the dates reach
    expect(days(ask('events in January'))).toEqual(['2027-01-01', '2027-02-01']);
    expect(range(ask('events in January'), 'startDate')?.text).toBe('in January 2027');
    expect(days(ask('events on December 12, 2026'))).toEqual(['2026-12-12', '2026-12-13']);
  });
});

describe('parseQuestion on a site of news articles (relative years, a compound type)', () => {
  const { ask } = syntheticSite(
    'news',
    'NewsArticle',
    80,
    (i) => ({
      headline: `Story ${i}`,
      datePublished: `${2015 + (i % 12)}-0${(i % 9) + 1}-12`,
      wordCount: 300 + ((i * 71) % 5000),
    }),
    (i) => `Story ${i}`,
    new Date('2026-12-03'),
  );

  it('reads "last year" and "this year" as calendar years, "the past year" as the twelve months to now', () => {
    expect(range(ask('articles from last year'), 'datePublished')).toMatchObject({ min: 2025, max: 2026 });
    expect(range(ask('articles from this year'), 'datePublished')).toMatchObject({ min: 2026, max: 2027 });
    const past = range(ask('articles from the past year'), 'datePublished')!;
    expect(past.max! - past.min!).toBeCloseTo(1, 5);
    expect(past.max).toBeCloseTo(2026.92, 2);
  });

  it('takes the last word of the only type ending in it for the type ("articles": NewsArticle)', () => {
    const u = ask('articles from this year');
    expect(u.freeText).toBe('');
    expect(u.noun).toBe('articles');
    expect(range(ask('articles longer than 3000 words'), 'wordCount')).toMatchObject({ min: 3000 });
  });
});

describe('parseQuestion on a property of yes and no (a synthetic site of restaurants)', () => {
  const { ask, model, catalog } = syntheticSite(
    'eat',
    'Restaurant',
    60,
    (i) => ({
      servesCuisine: ['Thai', 'Italian', 'French'][i % 3],
      acceptsReservations: i % 2 === 0,
      priceRange: '$'.repeat(1 + (i % 4)),
      address: { '@type': 'PostalAddress', addressLocality: ['Denver', 'Austin'][i % 2] },
    }),
    (i) => `Table ${i}`,
  );

  it('asks for yes where a word names the property, for no after a negation', () => {
    expect(value(ask('restaurants that take reservations'), 'acceptsReservations')).toMatchObject({
      values: ['yes'],
      negated: false,
      text: 'accepts reservations',
    });
    const without = ask('thai restaurants without reservations');
    expect(value(without, 'acceptsReservations')).toMatchObject({ values: ['yes'], negated: true });
    expect(value(without, 'servesCuisine')?.values).toEqual(['thai']);
    expect(value(ask('italian restaurants'), 'acceptsReservations')).toBeUndefined();
  });

  it('reads a price level written in signs ("$$") as a rank that "cheap" and "expensive" sort by', () => {
    expect(order(ask('cheap restaurants'), 'priceRange')).toMatchObject({
      direction: 'asc',
      text: 'low price range',
    });
    expect(order(ask('expensive thai restaurants'), 'priceRange')?.direction).toBe('desc');
    const prop = model.byPath.get('priceRange')!;
    expect(prop).toMatchObject({ kind: 'number', dimension: 'price level', min: 1, max: 4 });
    expect(showQuantity(2, prop)).toBe('$$');
    // two named items: "cheaper" asks for the price level as it does in a search
    const two = parseQuestion('is Table 1 cheaper than Table 2', {
      model,
      names: catalog.names.find('is Table 1 cheaper than Table 2', new Set(['eat'])),
    });
    expect(two.intent).toBe('compare');
    expect(two.asked).toEqual(['priceRange']);
    // the side the word prefers goes with it, for the verdict
    expect(two.orders).toMatchObject([
      { target: { path: 'priceRange' }, direction: 'asc', phrase: 'cheaper' },
    ]);
    // a price level is no amount of money
    expect(ask('restaurants under $30').constraints).toEqual([]);
  });

  it('turns a preference or a value the other way after a negation, over a preposition between', () => {
    expect(order(ask('a thai place that is not expensive'), 'priceRange')?.direction).toBe('asc');
    expect(order(ask('not too expensive restaurants'), 'priceRange')?.direction).toBe('asc');
    expect(value(ask('restaurants not in Denver'), 'address.addressLocality')).toMatchObject({
      values: ['denver'],
      negated: true,
    });
    expect(value(ask('restaurants that are not italian'), 'servesCuisine')).toMatchObject({
      values: ['italian'],
      negated: true,
    });
    expect(value(ask('italian restaurants'), 'servesCuisine')?.negated).toBe(false);
  });
});

describe('parseQuestion on areas and amounts of data (synthetic homes and apps)', () => {
  const homes = syntheticSite('homes', 'House', 120, (i) => ({
    floorSize: { '@type': 'QuantitativeValue', value: 600 + ((i * 97) % 3600), unitCode: 'FTK' },
    yearBuilt: 1920 + ((i * 13) % 104),
    numberOfBedrooms: 1 + (i % 6),
  }));
  const apps = syntheticSite('apps', 'SoftwareApplication', 90, (i) => ({
    fileSize: `${3 + ((i * 31) % 900)}MB`,
    applicationCategory: ['GameApplication', 'FinanceApplication', 'HealthApplication'][i % 3],
    operatingSystem: i % 2 ? 'Android' : 'iOS',
    aggregateRating: { '@type': 'AggregateRating', ratingValue: 1 + (i % 40) / 10, ratingCount: 10 + i * 7 },
  }));

  it("reads an area in the site's unitCode (FTK) against square feet and square metres", () => {
    expect(range(homes.ask('houses over 3000 sq ft'), 'floorSize')?.min).toBeCloseTo(3000 * 0.09290304, 6);
    expect(range(homes.ask('houses under 100 m2'), 'floorSize')).toMatchObject({ max: 100 });
    expect(order(homes.ask('the largest house'), 'floorSize')?.direction).toBe('desc');
  });

  it('leaves a number with a unit to its quantity, not to the year ("between 2000 and 3000 square feet")', () => {
    const u = homes.ask('homes between 2000 and 3000 square feet');
    expect(range(u, 'yearBuilt')).toBeUndefined();
    expect(range(u, 'floorSize')?.min).toBeCloseTo(2000 * 0.09290304, 6);
    expect(range(u, 'floorSize')?.max).toBeCloseTo(3000 * 0.09290304, 6);
    expect(range(homes.ask('homes built between 1990 and 2000'), 'yearBuilt')).toMatchObject({
      min: 1990,
      max: 2001,
    });
    expect(range(homes.ask('homes built in the 1990s'), 'yearBuilt')).toMatchObject({ min: 1990, max: 2000 });
  });

  it('reads sizes written with the number ("19MB") as amounts of data', () => {
    expect(range(apps.ask('apps under 50 MB'), 'fileSize')).toMatchObject({ max: 50 });
    expect(range(apps.ask('apps bigger than 1 GB'), 'fileSize')).toMatchObject({ min: 1000 });
    expect(order(apps.ask('the smallest app'), 'fileSize')?.direction).toBe('asc');
  });

  it('reads a schema.org type given as a value by the words before the property\'s ("GameApplication": Game)', () => {
    const u = apps.ask('android games');
    expect(value(u, 'applicationCategory')).toMatchObject({
      values: ['game'],
      text: 'application category Game',
    });
    expect(value(u, 'operatingSystem')?.values).toEqual(['android']);
    expect(value(apps.ask('finance apps for iOS'), 'applicationCategory')?.values).toEqual(['finance']);
  });
});

describe('parseQuestion on the words of a date (a synthetic site of podcast episodes)', () => {
  const { ask } = syntheticSite(
    'pods',
    'PodcastEpisode',
    80,
    (i) => ({
      episodeNumber: i,
      datePublished: `${2015 + (i % 12)}-0${1 + (i % 9)}-15`,
      duration: `PT${12 + i}M`,
    }),
    (i) => `Episode ${i}`,
    new Date('2026-12-07T12:00:00Z'),
  );

  it('takes a word of the date\'s own label for that date, not for a number ("published" is no issue number)', () => {
    const u = ask('episodes published last year');
    expect(range(u, 'datePublished')).toMatchObject({ min: 2025, max: 2026 });
    expect(u.orders).toEqual([]);
  });

  it('orders by the date for a word of time, adverbs too, and says it in words of time', () => {
    for (const q of ['recently published episodes', 'new episodes'])
      expect(order(ask(q), 'datePublished')).toMatchObject({
        direction: 'desc',
        text: 'recent date published',
      });
    expect(order(ask('the oldest episodes'), 'datePublished')?.text).toBe('earliest date published');
  });
});

describe('parseQuestion on a year kept as a number (a synthetic site of wines)', () => {
  const regions = ['Bordeaux', 'Rioja', 'Mosel'];
  const { ask, model, catalog } = syntheticSite(
    'wines',
    'Product',
    150,
    (i) => ({
      category: i % 3 === 2 ? 'White wine' : 'Red wine',
      description: `A wine from ${regions[i % 3]!}.`,
      offers: { '@type': 'Offer', price: 8 + ((i * 37) % 300), priceCurrency: 'EUR' },
      additionalProperty: [
        { '@type': 'PropertyValue', name: 'vintage', value: 1985 + ((i * 7) % 38) },
        { '@type': 'PropertyValue', name: 'alcohol', value: 11 + ((i * 3) % 45) / 10, unitText: '%' },
        { '@type': 'PropertyValue', name: 'region', value: regions[i % 3] },
      ],
    }),
    (i) => `Wine ${i}`,
  );

  it('reads old and new, before and since, decades and years on the year', () => {
    expect(range(ask('wines older than 2000'), 'additionalProperty.vintage')).toMatchObject({
      max: 2000,
      text: 'before 2000',
    });
    // the number is no alcohol content of 2,015%: the vintage, though "wines" relates to alcohol
    expect(range(ask('wines newer than 2015'), 'additionalProperty.vintage')).toMatchObject({ min: 2016 });
    const both = ask('wines from Bordeaux older than 2000');
    expect(range(both, 'additionalProperty.vintage')).toMatchObject({ max: 2000 });
    expect(value(both, 'additionalProperty.region')?.values).toEqual(['bordeaux']);
    expect(range(ask('wines from before 1995'), 'additionalProperty.vintage')).toMatchObject({
      max: 1995,
      maxInclusive: false,
    });
    expect(range(ask('wines since 2018'), 'additionalProperty.vintage')).toMatchObject({ min: 2018 });
    expect(range(ask('wines from the 1990s'), 'additionalProperty.vintage')).toMatchObject({
      min: 1990,
      max: 2000,
    });
  });

  it('takes a year outside the site’s dates for a number that is a year', () => {
    // reviews dated 2023-2025: 1990 is no date of theirs, and no alcohol content of 1,990%
    const reviewed = syntheticSite('cellar', 'Product', 90, (i) => ({
      datePublished: `${2023 + (i % 3)}-0${1 + (i % 9)}-15`,
      additionalProperty: [
        { '@type': 'PropertyValue', name: 'vintage', value: 1980 + ((i * 7) % 40) },
        { '@type': 'PropertyValue', name: 'alcohol', value: 11 + ((i * 3) % 45) / 10, unitText: '%' },
      ],
    }));
    expect(range(reviewed.ask('wines older than 1990'), 'additionalProperty.vintage')).toMatchObject({
      max: 1990,
      text: 'vintage before 1990',
    });
    expect(range(reviewed.ask('wines before 1990'), 'additionalProperty.vintage')).toMatchObject({
      max: 1990,
    });
  });

  it('compares on what "more" and "less" are of ("which has more alcohol")', () => {
    const q = 'which has more alcohol, Wine 1 or Wine 2';
    const u = parseQuestion(q, { model, names: catalog.names.find(q, new Set(['wines'])) });
    expect(u.intent).toBe('compare');
    expect(u.asked).toEqual(['additionalProperty.alcohol']);
    expect(u.orders).toMatchObject([
      { target: { path: 'additionalProperty.alcohol' }, direction: 'desc', phrase: 'more alcohol' },
    ]);
  });

  it('reads a two-word value in the plural as the value, not as an adjective’s preference', () => {
    const u = ask('red wines');
    expect(value(u, 'category')?.values).toEqual(['red wine']);
    expect(u.orders).toEqual([]);
  });
});

describe('parseQuestion on letters that are values (a synthetic shop of clothes)', () => {
  const { ask } = syntheticSite(
    'wear',
    'Product',
    80,
    (i) => ({
      category: ['Jacket', 'Hoodie'][i % 2],
      color: ['black', 'white'][i % 2 === 0 ? (i >> 1) % 2 : 0],
      size: ['S', 'M', 'L', 'XL'][i % 4],
    }),
    (i) => `Garment ${i}`,
  );

  it('reads a size written as a Roman numeral or a stopword as the size, not as a number', () => {
    expect(value(ask('jackets in size XL'), 'size')?.values).toEqual(['xl']);
    expect(value(ask('XL jackets'), 'size')?.values).toEqual(['xl']);
    expect(value(ask('black jackets in size M'), 'size')?.values).toEqual(['m']);
    expect(value(ask('size S hoodies'), 'size')?.values).toEqual(['s']);
    expect(ask('jackets in size XL').constraints.filter((c) => c.kind === 'range')).toEqual([]);
  });
});
