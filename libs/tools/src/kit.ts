import {
  contracts,
  createMessageFactory,
  toolContract,
  toRankItem,
  type MessageBody,
  type RetrievedItem,
  type ScoredItem,
  type StoredItem,
  type ToolHandler,
  type ToolRunRequest,
} from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { completeOrLocal, taskPrompt, type DefinedTask, type Llm, type TaskDefinition } from '@askbus/llm';
import type { z } from 'zod';

/** What a tool handler works with: the bus (retriever, ranker) and a language model. */
export interface ToolDeps {
  bus: Bus;
  llm: Llm;
}

export type ToolFn = (req: ToolRunRequest, ctx: HandlerContext, deps: ToolDeps) => AsyncIterable<MessageBody>;

/** Serves `tool.v1.<handler>.run`: message bodies out, stamped with this tool's envelope. */
export function serveTool(bus: Bus, handler: ToolHandler, deps: ToolDeps, fn: ToolFn): void {
  bus.serveStream(
    toolContract(handler),
    async function* (req, ctx) {
      const stamp = createMessageFactory(req.ask.conversationId, `${req.ask.queryId}-${handler}`);
      for await (const body of fn(req, ctx, deps)) yield stamp(body);
    },
    { queue: `tool-${handler}` },
  );
}

/** Candidates from the retriever for a query on some sites. */
export async function retrieve(
  bus: Bus,
  ctx: HandlerContext,
  query: string,
  site: string[],
  numResults: number,
): Promise<RetrievedItem[]> {
  const reply = await bus.request(
    contracts.search,
    { query, site, numResults },
    ctx.onward({ timeoutMs: 10_000 }),
  );
  return reply.items;
}

/** Items by URL from the retriever (unknown URLs left out). */
export async function itemsByUrl(bus: Bus, ctx: HandlerContext, urls: string[]): Promise<StoredItem[]> {
  if (urls.length === 0) return [];
  return (await bus.request(contracts.items, { urls }, ctx.onward({ timeoutMs: 10_000 }))).items;
}

/**
 * The item a name names on these sites, from the retriever's name index: an exact name first
 * (a year written with it picks among items of one name: "Titanic 1997"), else the first item
 * whose name starts with it. Undefined when the name is no item's.
 */
export async function itemNamed(
  bus: Bus,
  ctx: HandlerContext,
  name: string,
  site: string[],
): Promise<StoredItem | undefined> {
  const text = name.slice(0, 2_000);
  if (!text.trim()) return undefined;
  const { matches } = await bus.request(contracts.names, { site, text }, ctx.onward({ timeoutMs: 10_000 }));
  // the match that covers most of the name, exact before partial
  const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;
  const best = [...matches].sort(
    (a, b) =>
      words(text.slice(b.start, b.end)) - words(text.slice(a.start, a.end)) ||
      Number(b.exact) - Number(a.exact),
  )[0];
  if (!best || words(text.slice(best.start, best.end)) * 2 < words(text.replace(/\b(the|a|an)\b/gi, '')))
    return undefined;
  const year = /\b(1[0-9]{3}|2[0-9]{3})\b/.exec(text.slice(best.end))?.[1];
  const item = best.items.find((i) => year !== undefined && String(i.year) === year) ?? best.items[0];
  if (!item) return undefined;
  return (await itemsByUrl(bus, ctx, [item.url]))[0];
}

/** Scores from the ranker replicas for items and a query (one call, all items; the scores join the items by URL). */
export async function rank(
  bus: Bus,
  ctx: HandlerContext,
  query: string,
  items: StoredItem[],
): Promise<ScoredItem[]> {
  const out: ScoredItem[] = [];
  if (items.length === 0) return out;
  const sent = items.slice(0, 200).map(toRankItem);
  for await (const batch of bus.stream(contracts.score, { query, items: sent }, ctx.onward()))
    out.push(...batch.items);
  return out;
}

/**
 * A structured model call of a defined task (`defineTask`): the answer must satisfy the task's
 * schema. When the model fails (an error, a timeout, a malformed answer, an open circuit) the
 * task's local answer stands in, so a failing model degrades a tool's answer, never fails it.
 */
export async function ask<T extends DefinedTask, S extends z.ZodType>(
  llm: Llm,
  def: TaskDefinition<T, S>,
  task: NoInfer<T>,
  instructions: string,
  signal: AbortSignal,
  tier: 'low' | 'high' = 'high',
): Promise<z.infer<S>> {
  const { answer } = await completeOrLocal(llm, {
    messages: [{ role: 'user', content: taskPrompt(instructions, task) }],
    tier,
    jsonSchema: def.schema,
    schemaName: task.kind,
    task,
    signal,
  });
  return answer;
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
