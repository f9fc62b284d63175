/**
 * The question sets of eval:answers: eval/answers/<site>.jsonl, one question a line.
 *
 *   {"id":"c01","kind":"constraint","query":"gentoo penguins heavier than 6000 grams","relevant":{…}}
 *   {"id":"d01","kind":"details","query":"who directed Titanic","item":{…}}
 *   {"id":"m01","kind":"compare","query":"Alien vs Aliens","items":[{…},{…}]}
 *   {"id":"s01","kind":"search","query":"movies about the mafia"}
 *
 * The tool a question should reach follows from its kind: constraint and search → search,
 * details → details, compare → compare. Predicates (./predicate.ts) judge the dataset's own
 * fields; "@name" and "@url" (the item's name and url) name an item where the data has no
 * name of its own (penguins).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PredicateSchema } from './predicate';

export const KINDS = ['constraint', 'details', 'compare', 'search'] as const;
export type Kind = (typeof KINDS)[number];
export type Tool = 'search' | 'details' | 'compare';

const base = { id: z.string().min(1), query: z.string().trim().min(1), note: z.string().optional() };

export const QuestionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ ...base, kind: z.literal('constraint'), relevant: PredicateSchema }),
  z.strictObject({ ...base, kind: z.literal('details'), item: PredicateSchema }),
  z.strictObject({ ...base, kind: z.literal('compare'), items: z.tuple([PredicateSchema, PredicateSchema]) }),
  z.strictObject({ ...base, kind: z.literal('search') }),
]);
export type Question = z.infer<typeof QuestionSchema>;

export const EXPECTED_TOOL: Record<Kind, Tool> = {
  constraint: 'search',
  details: 'details',
  compare: 'compare',
  search: 'search',
};

/** Reads a JSONL question file; any bad line is an error naming the file, line and problem. */
export function readQuestions(file: string): Question[] {
  const out: Question[] = [];
  const ids = new Set<string>();
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new Error(`${file}:${i + 1}: bad JSON: ${(err as Error).message}`);
      }
      const q = QuestionSchema.safeParse(json);
      if (!q.success) throw new Error(`${file}:${i + 1}: ${z.prettifyError(q.error)}`);
      if (ids.has(q.data.id)) throw new Error(`${file}:${i + 1}: id "${q.data.id}" is used twice`);
      ids.add(q.data.id);
      out.push(q.data);
    });
  return out;
}
