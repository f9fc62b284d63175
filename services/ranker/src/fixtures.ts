import type { StoredItem } from '@askbus/contracts';

/** A few movies, enough to see the ranking order (test fixtures; not exported by the package). */
export function movieBatch(): StoredItem[] {
  const movie = (
    slug: string,
    name: string,
    director: string,
    genre: string[],
    date: string,
  ): StoredItem => ({
    url: `https://movies.example/${slug}`,
    name,
    site: 'movies',
    '@type': 'Movie',
    schema_object: {
      '@context': 'https://schema.org',
      '@type': 'Movie',
      name,
      director: { '@type': 'Person', name: director },
      genre,
      datePublished: date,
    },
  });
  return [
    movie('open-range', 'Open Range', 'Kevin Costner', ['Western'], '2003-08-15'),
    movie('mystic-river', 'Mystic River', 'Clint Eastwood', ['Drama'], '2003-10-08'),
    movie('pale-rider', 'Pale Rider', 'Clint Eastwood', ['Western'], '1985-06-28'),
    movie('annie-hall', 'Annie Hall', 'Woody Allen', ['Comedy'], '1977-04-20'),
    movie('high-plains-drifter', 'High Plains Drifter', 'Clint Eastwood', ['Western'], '1973-04-19'),
  ];
}
