import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { StoredItem } from '@askbus/contracts';
import type { ChatMessage } from './types';
import { itemForPrompt } from './ranking';

const RankingPrompt = z.object({ prompt: z.string().min(1), batchPrompt: z.string().min(1) });
export const PromptConfig = z.object({
  ranking: z.object({
    default: RankingPrompt,
    types: z.record(z.string(), RankingPrompt).default({}),
    aliases: z.record(z.string(), z.string()).default({}),
  }),
  summarize: z.object({ prompt: z.string().min(1) }),
  generate: z.object({ prompt: z.string().min(1) }),
});
export type PromptConfig = z.infer<typeof PromptConfig>;

/** config/prompts.json of this repository. */
export const DEFAULT_PROMPTS_PATH = fileURLToPath(new URL('../../../config/prompts.json', import.meta.url));

/** NLWeb's built-in fallback (ranking.py), used when no configuration file is found. */
const FALLBACK: PromptConfig = {
  ranking: {
    default: {
      prompt:
        "Assign a score between 0 and 100 to the following item based on how relevant it is to the user's question. If the score is above 50, provide a short description of the item highlighting the relevance to the user's question, without mentioning the user's question. If the score is below 75, in the description, include the reason why it is still relevant.\nThe user's question is: <question>{request.query}</question>\nThe item's description is: <item>{item.description}</item>",
      batchPrompt:
        "Assign a score between 0 and 100 to each of the following items based on how relevant it is to the user's question, with a short description of each. Answer with one entry per item, using the item's index.\nThe user's question is: <question>{request.query}</question>\nThe items are:\n{items}",
    },
    types: {},
    aliases: {},
  },
  summarize: {
    prompt:
      "Summarize the following search results in 2-3 sentences, citing each item you use as [n].\nThe user's question is: <question>{request.query}</question>\nThe results are:\n{items}",
  },
  generate: {
    prompt:
      "Answer the user's question using only the items below, citing every item you use as [n].\nThe user's question is: <question>{request.query}</question>\nThe items are:\n{items}",
  },
};

/** Prompts from ASKBUS_PROMPTS, else config/prompts.json, else the built-in fallback. */
export function loadPrompts(path = process.env.ASKBUS_PROMPTS || DEFAULT_PROMPTS_PATH): PromptConfig {
  if (!existsSync(path)) {
    if (process.env.ASKBUS_PROMPTS) throw new Error(`ASKBUS_PROMPTS names a missing file: ${path}`);
    return FALLBACK;
  }
  const parsed = PromptConfig.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path} is invalid at ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return parsed.data;
}

/** The ranking prompt for a schema.org type: its override, its alias's, or the default. */
export function rankingPromptFor(
  config: PromptConfig,
  type: string,
): { key: string; prompt: string; batchPrompt: string } {
  const key = config.ranking.types[type] ? type : (config.ranking.aliases[type] ?? 'default');
  return { key, ...(config.ranking.types[key] ?? config.ranking.default) };
}

type ItemShown = Pick<StoredItem, 'name' | '@type' | 'schema_object'>;

/** `{items}`: each item as `<item index="n">{json}</item>`, one a line. */
export function renderItems(items: readonly ItemShown[], firstIndex = 0): string {
  return items.map((it, i) => `<item index="${i + firstIndex}">${itemForPrompt(it)}</item>`).join('\n');
}

/** Fills a template's placeholders; unknown ones stay as written. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-zA-Z_.]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** The messages of one ranking call: one item, or a batch keyed by index. */
export function rankingMessages(
  config: PromptConfig,
  query: string,
  items: readonly ItemShown[],
  /** What the question was understood to require (understand's understandingNote), told to the model. */
  understood?: string,
): ChatMessage[] {
  const type = items[0]?.['@type'] ?? 'Thing';
  const p = rankingPromptFor(config, type);
  const content =
    items.length === 1
      ? fillTemplate(p.prompt, { 'request.query': query, 'item.description': itemForPrompt(items[0]!) })
      : fillTemplate(p.batchPrompt, { 'request.query': query, items: renderItems(items) });
  return [{ role: 'user', content: understood ? `${content}\n${understood}` : content }];
}
