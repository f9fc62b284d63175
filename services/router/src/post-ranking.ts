import type { AskRequest, MessageBody, ResultItem } from '@askbus/contracts';
import {
  createLlm,
  fillTemplate,
  loadPrompts,
  renderItems,
  streamOrLocal,
  type AnsweredQuestion,
  type Fallback,
  type Llm,
  type PromptConfig,
} from '@askbus/llm';
import type { SearchFindings } from './search-pipeline';
import { superlativeOf } from '@askbus/understand';
import { passedDeadline, untilAborted, untilDeadline } from './deadline';
import { reasonInWords } from './degrade';

/** The language model and prompts of the summarize and generate modes. */
export interface AnswerModel {
  llm: Llm;
  prompts: PromptConfig;
}

let localModel: AnswerModel | undefined;
/** The deterministic local default (it composes from the items, citing them). */
export function localAnswerModel(): AnswerModel {
  return (localModel ??= { llm: createLlm({ provider: 'local' }), prompts: loadPrompts() });
}

/** Items a generated answer may draw on (NLWeb's generate keeps the ranked items above 55). */
const GENERATE_MAX_ITEMS = 5;
const GENERATE_MIN_SCORE = 55;

/**
 * What follows the ranked results (NLWeb's PostRanking): a location map when most results have
 * an address, then the summarize / generate modes through the language model. The answer is
 * streamed as `summary_chunk` / `nlws_chunk` deltas while the model writes it, then sent whole
 * as NLWeb sends it (`result` with `@type: Summary`, or `nlws` with the items it cites).
 *
 * At the query's `deadline` (epoch ms) the model call is aborted: the deltas sent stay, the
 * answer is closed with the text written so far, and a status says it was cut there.
 */
export async function* postRanking(
  req: AskRequest,
  results: ResultItem[],
  model: AnswerModel = localAnswerModel(),
  signal?: AbortSignal,
  deadline?: number,
  findings: SearchFindings = {},
): AsyncGenerator<MessageBody, void, undefined> {
  const located = results
    .map((r) => ({ title: r.name, address: addressOf(r.schema_object) }))
    .filter((l): l is { title: string; address: string } => Boolean(l.address));
  if (results.length > 0 && located.length * 2 >= results.length) {
    yield { message_type: 'results_map', '@type': 'LocationMap', locations: located };
  }
  if (results.length === 0 || req.mode === 'list') return;

  const summarize = req.mode === 'summarize';
  const items = summarize
    ? results.slice(0, 3)
    : results.filter((r) => r.score > GENERATE_MIN_SCORE).slice(0, GENERATE_MAX_ITEMS);
  if (items.length === 0) {
    yield {
      message_type: 'nlws',
      '@type': 'GeneratedAnswer',
      answer: "I couldn't find relevant information to answer your question.",
      items: [],
    };
    return;
  }
  const template = summarize ? model.prompts.summarize.prompt : model.prompts.generate.prompt;
  const answered = answeredOf(findings);
  const content =
    fillTemplate(template, {
      'request.query': req.query,
      items: renderItems(items, 1),
      'request.top_k': String(items.length),
    }) + (answered ? `\n${understoodNote(answered)}` : '');
  const what = summarize ? 'summary' : 'answer';
  const modelSignal = untilDeadline(signal ?? new AbortController().signal, deadline);
  let text = '';
  let cut = false;
  // A model that fails before writing anything is replaced by the local composer; one that
  // fails mid-answer leaves the text so far, closed as it stands.
  let fellBack: Fallback | undefined;
  let brokeOff: string | undefined;
  try {
    const deltas = streamOrLocal(
      model.llm,
      {
        messages: [{ role: 'user', content }],
        tier: 'high',
        maxTokens: summarize ? 400 : 800,
        signal: modelSignal,
        queryId: req.queryId,
        task: {
          kind: summarize ? 'summarize' : 'generate',
          query: req.query,
          items,
          ...(answered ? { answered } : {}),
        },
      },
      (f) => (fellBack = f),
    );
    // Raced with the deadline as well, so a client slow to notice its abort cannot hold the query.
    for await (const delta of untilAborted(deltas, modelSignal)) {
      text += delta;
      yield { message_type: summarize ? 'summary_chunk' : 'nlws_chunk', content: delta };
    }
  } catch (err) {
    if (signal?.aborted) throw err;
    if (!passedDeadline(modelSignal, signal)) {
      const why = err instanceof Error ? err.message : String(err);
      if (text.trim() === '') {
        yield { message_type: 'status', content: `The ${what} could not be written: ${why}` };
        return;
      }
      brokeOff = why;
    } else cut = true;
  }
  text = text.trim();
  if (cut && text === '') {
    yield {
      message_type: 'status',
      content: `The ${what} was not written: the query's deadline came first.`,
    };
    return;
  }
  if (summarize) {
    yield { message_type: 'result', '@type': 'Summary', content: text };
  } else {
    yield { message_type: 'nlws', '@type': 'GeneratedAnswer', answer: text, items: citedItems(text, items) };
  }
  if (cut) {
    yield {
      message_type: 'status',
      content: `The ${what} was cut at the query's deadline: it ends where the model had got to.`,
    };
  }
  if (brokeOff !== undefined) {
    yield {
      message_type: 'status',
      content: `The ${what} breaks off where the model failed (${brokeOff}).`,
    };
  }
  if (fellBack) {
    yield {
      message_type: 'status',
      content: `The ${what} was written from the items by the local composer: ${reasonInWords(fellBack.reason)}.`,
    };
  }
}

/** What the search understood and found, for the summary or answer to state. */
function answeredOf(findings: SearchFindings): AnsweredQuestion | undefined {
  const u = findings.understanding;
  if (!u || (u.constraints.length === 0 && u.orders.length === 0)) return undefined;
  const sort = u.orders.find((o) => o.strength === 'sort');
  // a preference from one adjective ("heavy cars") reads as its superlative: "the heaviest"
  const prefer = u.orders.find(
    (o) => o.strength === 'prefer' && 'path' in o.target && /^[a-z]+$/i.test(o.phrase.trim()),
  );
  const lead = sort ? sort.phrase.replace(/^the\s+/i, '') : prefer ? superlativeOf(prefer.phrase) : undefined;
  return {
    noun: u.noun,
    constraints: u.constraints.map((k) => k.text),
    ...(lead ? { sort: `the ${lead}` } : {}),
    ...(findings.outcome ? { matched: findings.outcome.matched } : {}),
  };
}

/** The understanding in words, for a language model writing the summary or answer. */
function understoodNote(a: AnsweredQuestion): string {
  const parts = [...a.constraints, ...(a.sort ? [`sorted by ${a.sort}`] : [])];
  return `The question was understood as: ${a.noun || 'items'}${parts.length ? ` (${parts.join('; ')})` : ''}${a.matched !== undefined ? `; ${a.matched} items satisfy it` : ''}. State this in the answer and cite only the items given.`;
}

/** The items an answer cites as [n] (1-based), in order of first citation; all when it cites none. */
export function citedItems(text: string, items: ResultItem[]): ResultItem[] {
  const cited: ResultItem[] = [];
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    const item = items[Number(m[1]) - 1];
    if (item && !cited.includes(item)) cited.push(item);
  }
  return cited.length > 0 ? cited : items;
}

function addressOf(obj: Record<string, unknown>): string | undefined {
  for (const key of ['address', 'location', 'streetAddress', 'postalAddress']) {
    const v = obj[key];
    if (typeof v === 'string' && v.trim()) return v.trim();
    if (v && typeof v === 'object') {
      const parts = [
        'streetAddress',
        'addressLocality',
        'addressRegion',
        'postalCode',
        'addressCountry',
        'name',
      ]
        .map((k) => (v as Record<string, unknown>)[k])
        .filter((p): p is string => typeof p === 'string' && p.trim() !== '');
      if (parts.length) return parts.join(', ');
      const nested = addressOf(v as Record<string, unknown>);
      if (nested) return nested;
    }
  }
  return undefined;
}
