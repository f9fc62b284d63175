import type { ResultItem } from '@askbus/contracts';
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
  if (task.kind === 'rank') {
    const answers = localRankAnswers(task.query, task.items);
    if (task.batch) {
      return JSON.stringify({ results: answers.map((a, index) => ({ index, ...a })) });
    }
    if (answers.length !== 1) throw new LlmError('bad_request', 'one item per call without a batch schema');
    return JSON.stringify(answers[0]);
  }
  if (task.kind === 'summarize' || task.kind === 'generate') return compose(task);
  return JSON.stringify(localTaskAnswer(task));
}

/** A summary or an answer written from the items alone, citing each one it uses as [n]. */
export function compose(task: Extract<LlmTask, { kind: 'summarize' | 'generate' }>): string {
  const items = task.items.slice(0, task.kind === 'summarize' ? 3 : 5);
  if (items.length === 0) return `I couldn't find relevant information to answer "${task.query}".`;
  const cite = (r: ResultItem, i: number): string => `${r.name} [${i + 1}]`;
  const names = items.map(cite);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  if (task.kind === 'summarize') {
    return `The best matches for "${task.query}" are ${list}. ${items[0]!.description} [1].`;
  }
  const details = items.map((r, i) => `${r.name}: ${r.description} [${i + 1}].`).join(' ');
  return `For "${task.query}", ${list} fit best. ${details}`;
}

function usageOf(req: AdapterRequest, text: string): Usage {
  const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;
  return { tokensIn: req.messages.reduce((n, m) => n + words(m.content), 0), tokensOut: words(text) };
}
