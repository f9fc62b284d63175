import { z } from 'zod';
import type { StoredItem } from '@askbus/contracts';
import { STOPWORDS, tokenize } from '@askbus/search-core';
import { LlmError } from './errors';

/**
 * Structured tasks of the routing and tool steps, and the deterministic local answers to them.
 * A remote model reads the prompt; the local provider computes its answer from the task alone:
 * cue phrases and the tool's own <example> queries for tool scoring, pronouns and connectives
 * for decontextualization. The router's four tasks live here; a tool defines its own tasks
 * (`defineTask`) in its own folder, and their local answers are looked up by kind.
 */
export type ItemShown = Pick<StoredItem, 'name' | '@type' | 'schema_object'> & { url?: string };

export type RoutingTask =
  | {
      kind: 'tool_score';
      query: string;
      itemType: string;
      tool: { name: string; examples: string[]; params: string[] };
      /**
       * What the question was understood to ask, when the router understood it against the
       * site's profile: a list, one named item's details or two named items compared, the
       * items it names (exactly as the site names them) and the properties it asks about.
       */
      understood?: { intent: 'search' | 'details' | 'compare'; named: string[]; asked: string[] };
    }
  | { kind: 'decontextualize'; query: string; prev: string[] }
  | {
      kind: 'relevance';
      query: string;
      site: string;
      siteTypes: string[];
      /**
       * The kinds of thing the question asks for that the site does not hold, as the router read
       * them from WordNet and the site's data (services/router relevance.ts); the local model's
       * only evidence.
       */
      foreign?: string[];
    }
  | { kind: 'required_info'; query: string; itemType: string };

/** The kinds of the router's own tasks; a defined task takes any other kind. */
const ROUTING_KINDS: ReadonlySet<string> = new Set<RoutingTask['kind']>([
  'tool_score',
  'decontextualize',
  'relevance',
  'required_info',
]);

export function isRoutingTask(task: RoutingTask | DefinedTask): task is RoutingTask {
  return ROUTING_KINDS.has(task.kind);
}

// ------------------------------------------------------------------ defined tasks

/** A task defined outside this library (a tool's): a kind and the JSON fields its prompt carries. */
export type DefinedTask = { readonly kind: string; readonly [field: string]: unknown };

/** A tool's task: its kind, the schema its answer must satisfy and its deterministic local answer. */
export interface TaskDefinition<T extends DefinedTask, S extends z.ZodType> {
  readonly kind: T['kind'];
  readonly schema: S;
  /** The answer the local provider (and the fake model server) gives, as a model would write it. */
  readonly local: (task: T) => z.input<S>;
}

/** The kinds of the ranker's and the answer writers' tasks (the local provider answers them itself). */
const LLM_KINDS: ReadonlySet<string> = new Set(['rank', 'summarize', 'generate']);
const definitions = new Map<string, { local: (task: DefinedTask) => unknown }>();

/**
 * Defines a task and registers its local answer, so the local provider, the fallback to it and
 * the fake model server answer the task wherever the defining module was imported. A kind is
 * askbus's own (the router's, ranking, summaries, answers) or one task's: defining one of
 * askbus's kinds is refused; defining a kind again (a module evaluated again) replaces the
 * earlier definition.
 */
export function defineTask<T extends DefinedTask, S extends z.ZodType>(
  def: TaskDefinition<T, S>,
): TaskDefinition<T, S> {
  if (ROUTING_KINDS.has(def.kind) || LLM_KINDS.has(def.kind))
    throw new Error(`the task kind "${def.kind}" is askbus's own`);
  // the registry is keyed by kind: a task of this kind is a T
  definitions.set(def.kind, { local: (task) => def.local(task as T) });
  return def;
}

/** Whether the local provider answers tasks of this kind. */
export function hasLocalAnswer(kind: string): boolean {
  return ROUTING_KINDS.has(kind) || definitions.has(kind);
}

// ------------------------------------------------------------------ answer schemas

export const ToolScoreAnswer = z.looseObject({ score: z.coerce.number().min(0).max(100) });
export const DecontextualizeAnswer = z.object({
  requires_decontextualization: z.union([z.boolean(), z.enum(['True', 'False', 'true', 'false'])]),
  decontextualized_query: z.string(),
});
export const RelevanceAnswer = z.object({
  site_is_irrelevant_to_query: z.union([z.boolean(), z.enum(['True', 'False', 'true', 'false'])]),
  explanation_for_irrelevance: z.string().default(''),
});
export const RequiredInfoAnswer = z.object({
  required_info_found: z.union([z.boolean(), z.enum(['True', 'False', 'true', 'false'])]),
  user_question: z.string().default(''),
});
/** NLWeb's models answer "True"/"False" strings; accept both. */
export const truthy = (v: boolean | string): boolean => v === true || v === 'True' || v === 'true';

/** A prompt carrying its task as `<task>{json}</task>`, so a test double can compute the answer. */
export function taskPrompt(instructions: string, task: RoutingTask | DefinedTask): string {
  return `${instructions}\n<task>${JSON.stringify(task)}</task>`;
}
/** Any task a prompt carries has a kind; its other fields are the task's own. */
const PromptTask = z.looseObject({ kind: z.string() });
export function readTaskPrompt(prompt: string): RoutingTask | DefinedTask | undefined {
  const m = /<task>([\s\S]*)<\/task>/.exec(prompt);
  if (!m) return undefined;
  try {
    const read = PromptTask.safeParse(JSON.parse(m[1]!));
    // the fields are the task's own: the prompt was written by taskPrompt
    return read.success ? (read.data as RoutingTask | DefinedTask) : undefined;
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ local answers

/** The local (deterministic, no-model) answer to a task: the router's own, or a defined task's. */
export function localTaskAnswer(task: RoutingTask | DefinedTask): unknown {
  if (isRoutingTask(task)) return routingAnswer(task);
  const def = definitions.get(task.kind);
  if (!def) throw new LlmError('unsupported', `no local answer for the task "${task.kind}"`);
  return def.local(task);
}

function routingAnswer(task: RoutingTask): unknown {
  switch (task.kind) {
    case 'tool_score':
      return task.understood
        ? scoreToolUnderstood(task.query, task.tool, task.understood)
        : scoreTool(task.query, task.tool);
    case 'decontextualize':
      return decontextualize(task.query, task.prev);
    case 'relevance':
      return relevance(task.site, task.siteTypes, task.foreign ?? []);
    case 'required_info':
      return requiredInfo(task.query, task.itemType);
  }
}

const clean = (s: string): string =>
  s
    .replace(/[?!.]+$/g, '')
    .replace(/^["'\s]+|["'\s]+$/g, '')
    .replace(/\s+/g, ' ')
    .trim();
const stripArticle = (s: string): string => clean(s.replace(/^(the|a|an|some)\s+/i, ''));

/** Phrases that say what a tool is for; the score a query showing one gets. */
const CUES: Record<string, { re: RegExp; score: number }> = {
  details: {
    re: /^(please\s+)?(tell me (more )?about|(give me )?(the )?details (of|about|on|for)|describe|info(rmation)? (on|about)|what (is|was|are) the \w+( \w+)? of|who (directed|starred in|stars in|made|wrote|produced)|when was .+ (released|made)|how (long|much|many|fast|powerful|good) (is|was)|what year was|what is .+ rated)\b/i,
    score: 92,
  },
  compare: {
    re: /\b(compare|comparison of|vs\.?|versus|differences? between|which is better)\b|\bis .+ better than\b/i,
    score: 95,
  },
  ensemble: {
    re: /\b(plan|itinerary|outfit|menu|double feature|triple feature|movie night|marathon|go together|combination of|a set of)\b/i,
    score: 91,
  },
  recipe_substitutions: {
    re: /\b(instead of|substitut\w*|replace|replacement for|dairy[- ]free|gluten[- ]free|egg[- ]free|nut[- ]free|make (it|them|the .+) vegan|allergic)\b/i,
    score: 92,
  },
  accompaniment: {
    re: /\b(goes? (well )?with|serve with|side dish|to accompany|pairs? (well )?with)\b/i,
    score: 90,
  },
  who: {
    re: /\b(which (web)?sites?|what (web)?sites?|who (can|could|has|knows|sells)|where (can|could|should) i (find|look|ask|learn))\b/i,
    score: 93,
  },
};

/** Words of an example that frame the request: not names (capitalised), not glue words. */
const GLUE = new Set(['a', 'an', 'the', 'of', 'and', 'with', 'for', 'in', 'to', 'is', 'on', 'by', 'from']);
function frameWords(example: string): string[] {
  return example
    .split(/\s+/)
    .filter((w) => w !== '' && !/^[A-Z]/.test(w))
    .map((w) => w.toLowerCase().replace(/[^a-z0-9-]/g, ''))
    .filter((w) => w !== '' && !GLUE.has(w));
}
function exampleSimilarity(query: string, examples: readonly string[]): number {
  const q = new Set(query.toLowerCase().split(/[^a-z0-9-]+/));
  let best = 0;
  for (const ex of examples) {
    const frame = frameWords(ex);
    if (frame.length === 0) continue;
    best = Math.max(best, frame.filter((w) => q.has(w)).length / frame.length);
  }
  return best;
}

export function scoreTool(
  query: string,
  tool: { name: string; examples: readonly string[]; params?: readonly string[] },
): Record<string, unknown> & { score: number } {
  const fromExamples = Math.round(35 + 55 * exampleSimilarity(query, tool.examples));
  const anyCue = Object.entries(CUES).find(([, c]) => c.re.test(query));
  let score: number;
  if (tool.name === 'search') score = anyCue ? Math.min(fromExamples, 60) : Math.max(fromExamples, 85);
  else {
    const cue = Object.hasOwn(CUES, tool.name) ? CUES[tool.name] : undefined;
    score = cue?.re.test(query) ? cue.score : Math.min(fromExamples, anyCue ? 65 : 90);
  }
  const params = extractParams(tool.name, query);
  // A tool whose required name is missing from the query cannot run.
  if (tool.name === 'details' && !params.item_name) score = Math.min(score, 50);
  if (tool.name === 'compare' && !(params.item1_name && params.item2_name)) score = Math.min(score, 50);
  return { score, ...params };
}

/**
 * Tool scores for a question the router understood against the site: the named items decide
 * between details, compare and search; the cue phrases still score the other tools (ensemble,
 * recipes, who); the items' names fill the tools' parameters exactly as the site names them.
 */
export function scoreToolUnderstood(
  query: string,
  tool: { name: string; examples: readonly string[]; params?: readonly string[] },
  understood: { intent: 'search' | 'details' | 'compare'; named: string[]; asked: string[] },
): Record<string, unknown> & { score: number } {
  const base = scoreTool(query, tool);
  const asked = understood.asked.join(', ') || 'everything';
  // a cue of another tool (substitutions, accompaniment, ensemble, who) outranks a named item
  const otherCue = Object.entries(CUES).some(
    ([name, c]) => name !== 'details' && name !== 'compare' && c.re.test(query),
  );
  if (tool.name === 'details') {
    const [name] = understood.named;
    if (understood.intent === 'details' && name)
      return { ...base, score: otherCue ? 80 : 95, item_name: name, details_requested: asked };
    return { ...base, score: Math.min(base.score, 40) };
  }
  if (tool.name === 'compare') {
    const [a, b] = understood.named;
    if (understood.intent === 'compare' && a && b)
      return { ...base, score: otherCue ? 80 : 96, item1_name: a, item2_name: b, details_requested: asked };
    return { ...base, score: Math.min(base.score, 40) };
  }
  if (tool.name === 'search') {
    if (understood.intent !== 'search') return { ...base, score: Math.min(base.score, 50) };
    return { ...base, score: otherCue ? Math.min(base.score, 60) : Math.max(base.score, 88) };
  }
  return base;
}

/** The parameters of a tool's returnStruc, read off the query. */
export function extractParams(tool: string, query: string): Record<string, unknown> {
  const q = clean(query);
  switch (tool) {
    case 'search':
    case 'who':
      return tool === 'search'
        ? { search_query: q }
        : { justification: 'the query asks which sites can answer it' };
    case 'details': {
      let m =
        /^(?:please\s+)?(?:tell me (?:more )?about|(?:give me )?(?:the )?details (?:of|about|on|for)|describe|info(?:rmation)? (?:on|about))\s+(.+)$/i.exec(
          q,
        );
      if (m) return { item_name: stripItemWords(m[1]!), details_requested: 'everything' };
      m = /^what (?:is|was|are) the (\w+(?: \w+)?) of\s+(.+)$/i.exec(q);
      if (m) return { item_name: stripItemWords(m[2]!), details_requested: m[1]! };
      m = /^who (directed|starred in|stars in|made|wrote|produced)\s+(.+)$/i.exec(q);
      if (m) return { item_name: stripItemWords(m[2]!), details_requested: m[1]!.split(' ')[0]! };
      m = /^(?:when was|what year was)\s+(.+?)\s+(?:released|made)?$/i.exec(q);
      if (m) return { item_name: stripItemWords(m[1]!), details_requested: 'release date' };
      m = /^how (long|much|many|fast|powerful|good) (?:is|was)\s+(.+)$/i.exec(q);
      if (m) return { item_name: stripItemWords(m[2]!), details_requested: m[1]! };
      m = /^what is\s+(.+?)\s+rated$/i.exec(q);
      if (m) return { item_name: stripItemWords(m[1]!), details_requested: 'rating' };
      return { item_name: '', details_requested: '' };
    }
    case 'compare': {
      let rest = q
        .replace(
          /^(please\s+)?(compare|comparison of|what(?:'s| is| are) the differences? between|differences? between|which is better,?)\s+/i,
          '',
        )
        .replace(/^is\s+/i, '');
      let details = '';
      const aspect =
        /\s+(?:in terms of|on|by|for)\s+(price|rating|mileage|mpg|power|horsepower|budget|gross|year|length)$/i.exec(
          rest,
        );
      if (aspect) {
        details = aspect[1]!;
        rest = rest.slice(0, aspect.index);
      }
      const parts = rest.split(/\s+(?:and|vs\.?|versus|or|with|to|better than)\s+/i);
      if (parts.length < 2) return { item1_name: '', item2_name: '', details_requested: details };
      return {
        item1_name: stripItemWords(parts[0]!),
        item2_name: stripItemWords(parts.slice(1).join(' ')),
        details_requested: details || 'everything',
      };
    }
    case 'ensemble': {
      const lower = q.toLowerCase();
      const type = /\b(meal|dinner|lunch|breakfast|menu|appetizer|dessert|course)\b/.test(lower)
        ? 'meal_planning'
        : /\b(trip|travel|itinerary|visit|vacation)\b/.test(lower)
          ? 'travel_itinerary'
          : /\b(outfit|wear|clothes)\b/.test(lower)
            ? 'outfit'
            : /\b(movie|film|double feature|triple feature|marathon)\b/.test(lower)
              ? 'movie_night'
              : 'generic';
      const body = /\b(?:with|of|including|:)\s+(.+)$/i.exec(q)?.[1] ?? q;
      const queries = body
        .split(/\s*,\s*|\s+(?:and|plus|then|followed by)\s+/i)
        .map(stripArticle)
        .filter((s) => s !== '' && !/^(plan|a plan)$/i.test(s));
      return { queries: queries.length ? queries : [q], ensemble_type: type };
    }
    case 'recipe_substitutions': {
      const lower = q.toLowerCase();
      const need =
        /\b(vegan|vegetarian|gluten[- ]free|dairy[- ]free|egg[- ]free|nut[- ]free|low[- ]carb|keto)\b/.exec(
          lower,
        )?.[1] ?? '';
      const ingredient =
        /\b(?:instead of|substitute for|substitution for|replacement for|replace|without)\s+(?:the\s+)?([a-z]+(?: [a-z]+)?)(?=\s+(?:in|for|on)\b|$)/.exec(
          lower,
        )?.[1] ?? '';
      const recipe =
        /\b(?:in|for|make)\s+(?:the\s+|my\s+|a\s+)?(.+?)(?:\s+(?:dairy|gluten|egg|nut)[- ]free|\s+vegan)?$/i.exec(
          q,
        )?.[1] ?? '';
      return {
        recipe_name: clean(recipe),
        dietary_need: need,
        unavailable_ingredient: ingredient,
        preference: '',
      };
    }
    case 'accompaniment': {
      const m =
        /^(?:what|which|a|an|some)?\s*(.*?)\s+(?:goes?|go|to serve|would go|pairs?|to accompany)\s*(?:well\s+)?(?:with)?\s+(.+)$/i.exec(
          q,
        );
      const main = m ? stripArticle(m[2]!) : '';
      const wanted = m ? stripArticle(m[1]!) : q;
      return { search_query: wanted || 'side dish', main_item: main };
    }
    default:
      return {};
  }
}

function stripItemWords(s: string): string {
  return clean(
    s
      .replace(/^(the (movie|film|car|recipe)|movie|film|car|recipe)\s+/i, '')
      .replace(/\s+(movie|film|car)$/i, ''),
  );
}

const PRONOUN =
  /\b(it|its|it's|that one|this one|that movie|that film|that car|this movie|this film|this car|the first one|them|those|these|they|he|she|his|her)\b/i;
const CONNECTIVE =
  /^(and|but|only|also|with|without|from|in|by|starring|more|less|cheaper|newer|older|what about|how about)\b/i;

function decontextualize(query: string, prev: readonly string[]) {
  const last = prev.at(-1);
  if (!last) return { requires_decontextualization: false, decontextualized_query: query };
  const subject = (extractParams('details', last).item_name as string) || clean(last);
  if (PRONOUN.test(query)) {
    const rewritten = clean(query).replace(PRONOUN, (w) =>
      /^(its|his|her)$/i.test(w) ? `${subject}'s` : subject,
    );
    return { requires_decontextualization: true, decontextualized_query: rewritten };
  }
  const c = CONNECTIVE.exec(query.trim());
  if (c) {
    const q = clean(query);
    const about = /^(what|how) about\s+(.+)$/i.exec(q);
    if (about) {
      const base = clean(last);
      const at = base.toLowerCase().lastIndexOf(' with ');
      const rewritten = at >= 0 ? `${base.slice(0, at)} with ${about[2]}` : `${base} ${about[2]}`;
      return { requires_decontextualization: true, decontextualized_query: rewritten };
    }
    return {
      requires_decontextualization: true,
      decontextualized_query: `${clean(last)} ${q.replace(/^(and|but|also)\s+/i, '')}`,
    };
  }
  return { requires_decontextualization: false, decontextualized_query: query };
}

/**
 * NLWeb's irrelevance check, offline: the question is irrelevant when it asks for a kind of thing
 * the site does not hold. Reading that needs the site's data, so the router reads it (`foreign`);
 * without it the local model has no grounds to turn a question away.
 */
function relevance(site: string, siteTypes: readonly string[], foreign: readonly string[]) {
  if (site === 'all' || siteTypes.length === 0 || foreign.length === 0) {
    return { site_is_irrelevant_to_query: false, explanation_for_irrelevance: '' };
  }
  return {
    site_is_irrelevant_to_query: true,
    explanation_for_irrelevance: `The site ${site} has ${siteTypes.join(', ')} items; the question asks for ${foreign.join(' or ')} items.`,
  };
}

const GENERIC = new Set([
  'movie',
  'movies',
  'film',
  'films',
  'car',
  'cars',
  'recipe',
  'recipes',
  'watch',
  'buy',
  'eat',
  'cook',
  'drive',
  'see',
  'read',
  'try',
  'tonight',
  'today',
  'great',
  'nice',
  'cool',
  'interesting',
  'item',
  'items',
  'thing',
  'things',
  'help',
  'hi',
  'hello',
  'get',
  'go',
  'some',
  'me',
  'i',
  'should',
  'could',
  'can',
  'what',
  'which',
]);
function requiredInfo(query: string, itemType: string) {
  const content = tokenize(query).filter((t) => !STOPWORDS.has(t) && !GENERIC.has(t));
  if (content.length > 0) return { required_info_found: true, user_question: '' };
  const kind = itemType === 'Thing' ? 'item' : itemType.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return {
    required_info_found: false,
    user_question: `What kind of ${kind} are you looking for? Tell me something that matters to you: a genre, a period, a person, a feature.`,
  };
}
