import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { StoredItem } from '@askbus/contracts';
import { CARS_SITE, convertCars } from './cars';
import { MOVIES_SITE, convertMovies, type Conversion } from './movies';

export interface DemoSite {
  site: string;
  items: StoredItem[];
  /** Input rows left out (no title or name, or not an object). */
  skipped: number;
}

/** A file of the installed vega-datasets package, e.g. "movies.json". */
export function vegaDatasetPath(file: string): string {
  // The package exports only its entry point (build/index.js); data/ sits beside build/.
  const entry = createRequire(import.meta.url).resolve('vega-datasets');
  return join(dirname(entry), '..', 'data', file);
}

export function readVegaDataset(file: string): unknown {
  return JSON.parse(readFileSync(vegaDatasetPath(file), 'utf8'));
}

let cached: Array<{ site: string; conversion: Conversion }> | undefined;

/**
 * The demo sites: `movies` (3,201 rows of vega-datasets movies.json; the one without a title
 * is skipped) and `cars` (406 rows of cars.json). Converted once per process; the arrays
 * returned are fresh, the items shared, so treat items as read-only.
 */
export function loadDemoSites(): DemoSite[] {
  cached ??= [
    { site: MOVIES_SITE, conversion: convertMovies(readVegaDataset('movies.json')) },
    { site: CARS_SITE, conversion: convertCars(readVegaDataset('cars.json')) },
  ];
  return cached.map(({ site, conversion }) => ({
    site,
    items: [...conversion.items],
    skipped: conversion.skipped,
  }));
}
