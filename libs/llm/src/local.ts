import type { ResultItem } from '@askbus/contracts';
import { singularOf } from '@askbus/understand';
import { LlmError } from './errors';
import { localRankAnswers } from './ranking';
import { localTaskAnswer } from './tasks';
import type { AdapterRequest, LlmAdapter, LlmTask, Usage } from './types';

/**
 * The deterministic local default: no network, no model. It does not pretend to chat: it reads
 * the structured task of a call. Ranking delegates to search-core's scorer (the same scores
 * the local ranker gives); summaries and answers are composed from the items given, citing
 * them as [n]. A call without a task it understands is refused as `unsupported`.
 */
export class LocalAdapter implements LlmAdapter {
  readonly name = 'local';

  async complete(req: AdapterRequest): Promise<{ text: string; usage: Usage }> {
    const text = answer(req);
    return { text, usage: usageOf(req, text) };
  }

  async *stream(req: AdapterRequest): AsyncGenerator<{ delta?: string; usage?: Usage }> {
    const text = answer(req);
    // Word by word, as a model would produce it.
    for (const piece of text.match(/\S+\s*/g) ?? []) {
      if (req.signal.aborted) throw new LlmError('cancelled', 'cancelled');
      yield { delta: piece };
    }
    yield { usage: usageOf(req, text) };
  }
}

function answer(req: AdapterRequest): string {
  const task = req.task;
  if (!task) throw new LlmError('unsupported', 'the local provider answers only structured tasks');
  if (isRank(task)) {
    const answers = localRankAnswers(task.query, task.items);
    if (task.batch) {
      return JSON.stringify({ results: answers.map((a, index) => ({ index, ...a })) });
    }
    if (answers.length !== 1) throw new LlmError('bad_request', 'one item per call without a batch schema');
    return JSON.stringify(answers[0]);
  }
  if (isComposed(task)) return compose(task);
  return JSON.stringify(localTaskAnswer(task));
}

type RankTask = Extract<LlmTask, { kind: 'rank' }>;
type ComposedTask = Extract<LlmTask, { kind: 'summarize' | 'generate' }>;
// A defined task's kind is a string (so `kind === 'rank'` alone does not narrow), never one of
// these: defineTask refuses them.
const isRank = (task: LlmTask): task is RankTask => task.kind === 'rank';
const isComposed = (task: LlmTask): task is ComposedTask =>
  task.kind === 'summarize' || task.kind === 'generate';

/** A summary or an answer written from the items alone, citing each one it uses as [n]. */
export function compose(task: ComposedTask): string {
  const items = task.items.slice(0, task.kind === 'summarize' ? 3 : 5);
  if (items.length === 0) return `I couldn't find relevant information to answer "${task.query}".`;
  const cite = (r: ResultItem, i: number): string => `${r.name} [${i + 1}]`;
  const names = items.map(cite);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const lead = leadIn(task, items.length);
  if (task.kind === 'summarize') return `${lead} ${list}. ${withoutFinalStop(items[0]!.description)} [1].`;
  const details = items.map((r, i) => `${withoutFinalStop(r.description)} [${i + 1}].`).join(' ');
  return `${lead} ${list}. ${details}`;
}

/**
 * The sentence's opening, stating what was answered: "Of the 63 cars with 8 cylinders from
 * 1970–1973, the heaviest are"; without an understanding, "The best matches for "…" are".
 */
function leadIn(task: ComposedTask, shown: number): string {
  const a = task.answered;
  const verb = shown === 1 ? 'is' : 'are';
  if (!a || (a.constraints.length === 0 && !a.sort)) {
    return task.kind === 'summarize'
      ? `The best ${shown === 1 ? 'match' : 'matches'} for "${task.query}" ${verb}`
      : `For "${task.query}", the best ${shown === 1 ? 'fit is' : 'fits are'}`;
  }
  // values that say what kind of thing go before the noun ("Western movies"), the rest after it
  const kinds = a.constraints.filter((k) => /^in \S/.test(k)).map((k) => k.slice(3));
  const rest = a.constraints.filter((k) => !/^in \S/.test(k)).map(withPreposition);
  const noun = a.matched === 1 ? singularOf(a.noun || 'items') : a.noun || 'items';
  const what = [...kinds, noun, ...rest].join(' ');
  if (a.matched === 1) return `The only ${what} is`;
  const counted =
    a.matched !== undefined ? `the ${a.matched.toLocaleString('en-US')} ${what}` : `the ${what}`;
  if (a.sort) return `Of ${counted}, ${a.sort.replace(/^the\s+/i, 'the ')} ${verb}`;
  return `Of ${counted}, the best ${shown === 1 ? 'match' : 'matches'} ${verb}`;
}

/** "weight over 4,000 lb" → "with weight over 4,000 lb"; "from the 1990s" stays. */
function withPreposition(text: string): string {
  return /^(from|with|by|in|on|at|of|for|under|over|directed|rated|made|released|starring|not|that|which|who|before|after|since)\b/i.test(
    text,
  )
    ? text
    : `with ${text}`;
}

const withoutFinalStop = (s: string): string => s.trim().replace(/[.!?…]+$/, '');

function usageOf(req: AdapterRequest, text: string): Usage {
  const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;
  return { tokensIn: req.messages.reduce((n, m) => n + words(m.content), 0), tokensOut: words(text) };
}
