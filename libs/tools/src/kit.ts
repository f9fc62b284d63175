import {
  contracts,
  createMessageFactory,
  toolContracts,
  type MessageBody,
  type RetrievedItem,
  type ScoredItem,
  type StoredItem,
  type ToolHandler,
  type ToolRunRequest,
} from '@askbus/contracts';
import type { Bus, HandlerContext } from '@askbus/bus';
import { taskPrompt, type Llm, type RoutingTask } from '@askbus/llm';
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
    toolContracts[handler],
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

/** Scores from the ranker replicas for items and a query (one call, all items). */
export async function rank(
  bus: Bus,
  ctx: HandlerContext,
  query: string,
  items: StoredItem[],
): Promise<ScoredItem[]> {
  const out: ScoredItem[] = [];
  if (items.length === 0) return out;
  for await (const s of bus.stream(contracts.score, { query, items: items.slice(0, 200) }, ctx.onward()))
    out.push(s);
  return out;
}

/** A structured model call whose task the local provider (and the fake server) understands. */
export function ask<S extends z.ZodType>(
  llm: Llm,
  schema: S,
  task: RoutingTask,
  instructions: string,
  signal: AbortSignal,
  tier: 'low' | 'high' = 'high',
): Promise<z.infer<S>> {
  return llm.complete({
    messages: [{ role: 'user', content: taskPrompt(instructions, task) }],
    tier,
    jsonSchema: schema,
    schemaName: task.kind,
    task,
    signal,
  }) as Promise<z.infer<S>>;
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
