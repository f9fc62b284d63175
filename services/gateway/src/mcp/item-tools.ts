/**
 * MCP's `details` and `compare` tools: the router runs its details or compare tool on the
 * question they make, and the tool's answer (read through its contract) is the result.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CompareItems, ItemDetails } from '@askbus/contracts';
import type { Message } from '@askbus/contracts';
import { AnswerFold } from '../ask/fold';
import type { Answer } from '../ask/fold';
import { askRequest } from '../ask/runner';
import { issueText } from '../ask/skills';
import { runQuery } from './ask-tool';
import { badParams, toolResult } from './call';
import type { ToolCall } from './call';
import { compareQuery, detailsQuery, renderCompare, renderDetails } from './tools';
import type { CompareArgs, CompareOutput, DetailsArgs, DetailsOutput } from './tools';

/**
 * Runs `query` with an explicit router tool (details, compare) and hands its answer messages
 * to `onTool`; the other messages fill the answer as for ask. Returns the ask-shaped answer or
 * an isError result.
 */
async function runTool(
  call: ToolCall,
  tool: 'details' | 'compare',
  query: string,
  site: string | string[] | undefined,
  onTool: (m: Message) => Promise<void>,
  what: string,
): Promise<Answer | CallToolResult> {
  const parsed = askRequest({ query, site, tool, maxResults: 10 });
  if (!parsed.success) throw badParams(`Invalid arguments for tool ${tool}: ${issueText(parsed.error)}`);
  const fold = new AnswerFold(parsed.data);
  const failed = await runQuery(call, parsed.data, fold, what, onTool);
  if (failed) return failed;
  const out = fold.answer;
  // The router asked the user something instead of running the tool: pass the question on.
  if (out.ask_user) out.notes.push(`The router asks: ${out.ask_user}`);
  return out;
}

const isResult = (r: Answer | CallToolResult): r is CallToolResult => 'content' in r;

/** What details and compare return besides their answer. */
const runOf = (run: Answer, notes: string[], errors: string[]) => ({
  query_id: run.query_id,
  query: run.query,
  site: run.site,
  notes: [...notes, ...run.notes],
  errors: [...errors, ...run.errors],
  ...(run.results.length ? { results: run.results } : {}),
});

export async function detailsTool(call: ToolCall, args: DetailsArgs): Promise<CallToolResult> {
  let item: ItemDetails | undefined;
  const misread: string[] = [];
  const notFound: string[] = [];
  const query = detailsQuery(args);
  const run = await runTool(
    call,
    'details',
    query,
    args.site,
    async (m) => {
      if (m.message_type !== 'item_details') return;
      const parsed = ItemDetails.safeParse(m);
      if (!parsed.success)
        misread.push(`the details tool sent an answer the gateway cannot read (${issueText(parsed.error)})`);
      // The tool says "not found" as item_details without a url.
      else if (!parsed.data.url) notFound.push(parsed.data.details);
      else item ??= parsed.data;
    },
    `Getting the details for "${query}"`,
  );
  if (isResult(run)) return run;
  const out: DetailsOutput = { ...runOf(run, notFound, misread), ...(item ? { item } : {}) };
  return toolResult(renderDetails(out), out);
}

export async function compareTool(call: ToolCall, args: CompareArgs): Promise<CallToolResult> {
  let comparison: CompareItems | undefined;
  const misread: string[] = [];
  const { query, swapped, note } = compareQuery(args);
  const run = await runTool(
    call,
    'compare',
    query,
    args.site,
    async (m) => {
      if (m.message_type !== 'compare_items') return;
      const parsed = CompareItems.safeParse(m);
      if (!parsed.success)
        misread.push(`the compare tool sent an answer the gateway cannot read (${issueText(parsed.error)})`);
      else if (!comparison) {
        const c = parsed.data;
        // Back in the caller's order when the names were swapped for the query text.
        comparison = swapped
          ? {
              ...c,
              item1: c.item2,
              item2: c.item1,
              ...(c.table
                ? { table: c.table.map((r) => ({ field: r.field, item1: r.item2, item2: r.item1 })) }
                : {}),
            }
          : c;
      }
    },
    `Comparing "${args.item1}" and "${args.item2}"`,
  );
  if (isResult(run)) return run;
  const out: CompareOutput = {
    ...runOf(run, note ? [note] : [], misread),
    ...(comparison ? { comparison } : {}),
  };
  return toolResult(renderCompare(out), out);
}
