import { describe, expect, it } from 'vitest';
import { describeItem } from './describe';
import { extractFacts, factsByPath } from './facts';

const describeSchema = (name: string, schema: Record<string, unknown>, asked?: string[]): string =>
  describeItem({ name, facts: factsByPath(extractFacts(schema)), ...(asked ? { asked } : {}) });

describe('describeItem', () => {
  it('says a value two properties share once ("duration" and "timeRequired")', () => {
    const text = describeSchema(
      'Episode 47',
      { '@type': 'PodcastEpisode', duration: 'PT1H42M', timeRequired: 'PT1H42M', episodeNumber: 47 },
      ['duration'],
    );
    expect(text.match(/102 minutes/g)).toHaveLength(1);
    expect(describeSchema('Episode 48', { duration: 'PT20M', timeRequired: 'PT20M' })).toBe(
      'Episode 48: 20 minutes.',
    );
  });

  it('names each of several lengths of time, shows a year as one and leaves a currency to its price', () => {
    expect(
      describeSchema('Soup', {
        cookTime: 'PT13M',
        prepTime: 'PT27M',
        offers: { '@type': 'Offer', price: 18.9, priceCurrency: 'EUR' },
        additionalProperty: [{ '@type': 'PropertyValue', name: 'vintage', value: 2013 }],
      }),
    ).toBe('Soup: cook time 13 minutes, prep time 27 minutes, price €18.9, vintage 2013.');
  });

  it('says a property of yes and no in words, and whole hours as hours', () => {
    expect(
      describeSchema('Python 1', {
        timeRequired: 'PT4H',
        isAccessibleForFree: false,
        acceptsReservations: true,
      }),
    ).toBe('Python 1: 4 hours, is accessible for free: no, accepts reservations.');
    expect(describeSchema('Alien', { duration: 'PT1H57M' })).toBe('Alien: 117 minutes.');
  });

  it('shows areas, amounts of data and price levels the way the site wrote them', () => {
    const home = describeSchema('12 Oak Lane', {
      floorSize: { '@type': 'QuantitativeValue', value: 2217, unitCode: 'FTK' },
    });
    expect(home).toBe('12 Oak Lane: floor size 2,217 sq ft.');
    expect(describeSchema('Notely', { fileSize: '19MB' })).toBe('Notely: file size 19 MB.');
    expect(describeSchema('Harbor Inn', { priceRange: '$$' })).toBe('Harbor Inn: price range $$.');
  });
});

describe('values written as codes and enumeration members', () => {
  it('names a language or a country given as its code, and keeps a one-letter prefix on its word', () => {
    const facts = factsByPath(
      extractFacts({
        inLanguage: 'fr',
        address: { '@type': 'PostalAddress', addressCountry: 'DE' },
        bookFormat: 'https://schema.org/EBook',
        byArtist: { '@type': 'MusicGroup', name: 'Mara Quinn' },
      }),
    );
    expect(facts.get('inLanguage')?.[0]?.str).toBe('French');
    expect(facts.get('address.addressCountry')?.[0]?.str).toBe('Germany');
    expect(facts.get('bookFormat')?.[0]?.str).toBe('Ebook');
    expect(describeItem({ name: 'Book', facts, asked: ['inLanguage', 'byArtist'] })).toBe(
      'Book: in French; by Mara Quinn. Also: address country Germany, book format Ebook.',
    );
    // a Country or a Language entity named by its code, and schema.org's nationality (a Country)
    const person = factsByPath(
      extractFacts({
        nationality: { '@type': 'Country', name: 'AU' },
        knowsLanguage: { '@type': 'Language', name: 'es' },
        birthPlace: { '@type': 'Place', name: 'AU' },
      }),
    );
    expect(person.get('nationality')?.[0]?.str).toBe('Australia');
    expect(person.get('knowsLanguage')?.[0]?.str).toBe('Spanish');
    expect(person.get('birthPlace')?.[0]?.str).toBe('AU');
    expect(factsByPath(extractFacts({ nationality: 'KE' })).get('nationality')?.[0]?.str).toBe('Kenya');
    // not a code under those names: left as written
    expect(
      factsByPath(extractFacts({ inLanguage: 'English', title: 'fr' })).get('inLanguage')?.[0]?.str,
    ).toBe('English');
  });
});

describe('phrases of a unit in the label and of constants', () => {
  it('says "24 months of experience" and "Full time"', () => {
    const facts = factsByPath(
      extractFacts({
        employmentType: 'FULL_TIME',
        experienceRequirements: { '@type': 'OccupationalExperienceRequirements', monthsOfExperience: 24 },
      }),
    );
    expect(
      describeItem({
        name: 'Nurse',
        facts,
        asked: ['experienceRequirements.monthsOfExperience', 'employmentType'],
      }),
    ).toBe('Nurse: 24 months of experience; employment type Full time.');
  });
});
