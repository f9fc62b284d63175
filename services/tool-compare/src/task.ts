import { z } from 'zod';
import { defineTask, type ItemShown } from '@askbus/llm';
import { summarizeItem } from '@askbus/tools';
import {
  extractFacts,
  factPhrase,
  factsByPath,
  showQuantity,
  shownLabel,
  type Fact,
} from '@askbus/understand';

/** The compare tool's model task: two items side by side for a question, and a verdict. */
export type CompareTask = {
  kind: 'compare';
  query: string;
  details_requested: string;
  item1: ItemShown;
  item2: ItemShown;
  /** Property paths the question compares on (the router's understanding), when known. */
  aspects?: string[];
  /** The side a comparative word prefers on a path ("cheaper": the lower price wins). */
  prefer?: Preference[];
};

/** "cheaper" on `offers.price`: the lower wins, and the verdict says so in that word. */
export const Preference = z.object({
  path: z.string().max(500),
  direction: z.enum(['asc', 'desc']),
  word: z.string().max(80),
});
export type Preference = z.infer<typeof Preference>;

export const CompareAnswer = z.object({ comparison: z.string(), verdict: z.string().default('') });

export const compareTask = defineTask({
  kind: 'compare',
  schema: CompareAnswer,
  local: (task: CompareTask) =>
    compareItems(task.item1, task.item2, task.details_requested, task.aspects ?? [], task.prefer ?? []),
});

const numberOf = (facts: ReadonlyMap<string, readonly Fact[]>, path: string): Fact | undefined =>
  facts.get(path)?.find((f) => f.num !== undefined && (f.kind === 'number' || f.kind === 'date'));

/**
 * Two items side by side on the properties asked about (else the numbers both have, a rating
 * first), and a verdict on the first of them that differs: the higher rating comes out ahead;
 * other measures say which has more.
 */
export function compareItems(
  item1: ItemShown,
  item2: ItemShown,
  detailsRequested: string,
  aspects: readonly string[],
  prefer: readonly Preference[] = [],
): z.input<typeof CompareAnswer> {
  const f1 = factsByPath(extractFacts(item1.schema_object));
  const f2 = factsByPath(extractFacts(item2.schema_object));
  const shared = [...f1.keys()].filter((p) => numberOf(f1, p) && numberOf(f2, p));
  // nothing asked: the rating first, as "which is better" is what a bare comparison asks
  const rated = shared.filter((p) => numberOf(f1, p)!.dimension === 'rating');
  const paths = aspects.length
    ? aspects.filter((p) => f1.has(p) || f2.has(p))
    : [...rated, ...shared.filter((p) => !rated.includes(p))].slice(0, 4);
  const parts: string[] = [];
  let verdict = '';
  for (const path of paths) {
    const a = numberOf(f1, path);
    const b = numberOf(f2, path);
    if (!a || !b) {
      const pa = f1.get(path);
      const pb = f2.get(path);
      if (pa && pb)
        parts.push(
          `${item1.name}: ${factPhrase(path, pa) ?? ''}; ${item2.name}: ${factPhrase(path, pb) ?? ''}.`,
        );
      continue;
    }
    // the reviewers' rating reads as "rating" ("aggregate rating"); others keep their names
    // ("star rating": a hotel's class, beside its guests' rating)
    const label = a.dimension === 'rating' && !a.label ? 'rating' : shownLabel(a.label || path);
    const show = (f: Fact): string =>
      f.kind === 'date'
        ? String(Math.floor(f.num!))
        : showQuantity(f.num!, { unit: f.unit, displayUnit: f.srcUnit, dimension: f.dimension });
    parts.push(`On ${label}, ${item1.name} has ${show(a)} and ${item2.name} ${show(b)}.`);
    const wanted = prefer.find((p) => p.path === path);
    if (!verdict && a.num !== b.num && wanted) {
      // the question's own word: "2019 BMW 330i is cheaper: price $15,500 against $26,100."
      const firstWins = a.num! < b.num! === (wanted.direction === 'asc');
      const [win, lose] = firstWins ? [a, b] : [b, a];
      const winner = firstWins ? item1.name : item2.name;
      // "which has more RAM": "… has more RAM: 64 GB against 32 GB" (the word names the property)
      verdict = /^(more|less|fewer)\s/i.test(wanted.word)
        ? `${winner} has ${wanted.word}: ${show(win)} against ${show(lose)}.`
        : `${winner} is ${wanted.word.toLowerCase()}: ${label} ${show(win)} against ${show(lose)}.`;
    }
    if (!verdict && a.num !== b.num) {
      const [hi, lo] = a.num! > b.num! ? [item1.name, item2.name] : [item2.name, item1.name];
      verdict =
        a.dimension === 'rating'
          ? `${hi} comes out ahead on ${label}.`
          : a.kind === 'date'
            ? `${hi} is the more recent (${lo} is older).`
            : `${hi} has the higher ${label}: ${show(a.num! > b.num! ? a : b)} against ${show(a.num! > b.num! ? b : a)}.`;
    }
  }
  if (parts.length === 0)
    parts.push(`${item1.name}: ${summarizeItem(item1)} ${item2.name}: ${summarizeItem(item2)}`);
  if (!verdict)
    verdict = `Neither clearly beats the other${detailsRequested && detailsRequested !== 'everything' ? ` on ${detailsRequested}` : ''}; it depends on what you want from a ${item1['@type'].toLowerCase()}.`;
  return { comparison: `${parts.join(' ')} ${verdict}`, verdict };
}
