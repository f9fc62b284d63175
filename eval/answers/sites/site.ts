import type { EvaluateOptions, Row } from '../predicate';

/** One data set row that became an item, with that item's url and name. */
export interface EvalRecord {
  url: string;
  name: string;
  row: Row;
}

/** A site of the evaluation: its rows (judged by the predicates) and how its items are loaded. */
export interface EvalSite {
  site: string;
  records: EvalRecord[];
  readDate?: EvaluateOptions['readDate'];
  /**
   * The schema.org items the eval writes to a JSON lines file and loads with `askbus load`;
   * absent for the demo sites, which `askbus up` loads itself.
   */
  items?: Array<Record<string, unknown>>;
}

export const isRow = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
