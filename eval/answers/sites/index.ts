import { carsSite, moviesSite } from './demo';
import { earthquakesSite } from './earthquakes';
import { penguinsSite } from './penguins';
import type { EvalSite } from './site';

export type { EvalRecord, EvalSite } from './site';

/** Every site of the evaluation, by name: the two demo sites and two of kinds the demo never had. */
export const SITES: Record<string, () => EvalSite> = {
  movies: moviesSite,
  cars: carsSite,
  penguins: penguinsSite,
  earthquakes: earthquakesSite,
};
