import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SchemaObject, StoredItem } from './item';

describe('SchemaObject', () => {
  it('takes any JSON object whole: every key, nested values as they are', () => {
    const movie = JSON.parse(
      '{"@context":"https://schema.org","@type":"Movie","name":"Pale Rider","director":{"@type":"Person","name":"Clint Eastwood"},"genre":["Western"],"aggregateRating":{"ratingValue":7.3},"dateCreated":null}',
    ) as unknown;
    expect(SchemaObject.parse(movie)).toEqual(movie);
    const item = { url: 'https://example.test/1', name: 'Pale Rider', site: 'movies', '@type': 'Movie' };
    expect(StoredItem.parse({ ...item, schema_object: movie }).schema_object).toEqual(movie);
  });

  it('refuses what is not an object: an array, null, a string, a number', () => {
    for (const value of [[{ '@type': 'Movie' }], null, 'Movie', 7]) {
      expect(SchemaObject.safeParse(value).success).toBe(false);
    }
  });

  it('says "an object with any properties" in JSON Schema', () => {
    const schema = z.toJSONSchema(SchemaObject) as Record<string, unknown>;
    expect(schema).toMatchObject({ type: 'object', additionalProperties: {} });
    expect(schema.required).toBeUndefined();
  });
});
