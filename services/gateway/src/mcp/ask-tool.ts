/**
 * MCP's `ask` tool, and the query every MCP tool that asks the router runs: the gateway's one
 * runner and fold, with the router's messages as progress and log notifications. When the router
 * asks the user something and found nothing, the question is put to the user (elicitation) and
 * their answer runs as the next turn.
 */
import { ElicitResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AskRequest, Message } from '@askbus/contracts';
import { failureOf } from '../errors';
import { AnswerFold } from '../ask/fold';
import { ROUTER, askRequest, newQueryId, runAsk } from '../ask/runner';
import { issueText, renderAsk } from '../ask/skills';
import type { AskArgs } from '../ask/skills';
import { badParams, seconds, toolResult } from './call';
import type { ToolCall } from './call';

const MAX_ELICIT_ROUNDS = 3;

/** Sends what a message changed in the answer as MCP notifications. */
async function notify(
  call: ToolCall,
  fold: AnswerFold,
  queryId: string,
  m: Message,
  onTool?: (m: Message) => Promise<void>,
): Promise<void> {
  const step = fold.add(m);
  const results = fold.answer.results.length;
  switch (step.kind) {
    case 'bracket':
      return call.log('debug', { query_id: queryId, message_type: step.type });
    case 'results':
      return call.progress(`${results} result${results === 1 ? '' : 's'}`);
    case 'summary':
      return call.progress('summary');
    case 'answer':
      return call.progress('answer');
    case 'ask_user':
      return call.log('info', { query_id: queryId, ask_user: step.text });
    case 'note':
      await call.log('info', { query_id: queryId, message_type: step.type, text: step.text });
      return call.progress(step.text);
    case 'error':
      return m.message_type === 'error'
        ? call.log('warning', { query_id: queryId, error: m.error, code: m.code })
        : undefined;
    case 'decontextualized':
      return call.log('info', { query_id: queryId, decontextualized_query: step.query });
    case 'tool':
      if (onTool && (m.message_type === 'item_details' || m.message_type === 'compare_items')) {
        await onTool(m);
        return call.progress(m.message_type);
      }
      return call.log('debug', { query_id: queryId, message: m });
    default:
      return call.log('debug', { query_id: queryId, message: m });
  }
}

/**
 * One query over the bus within the call's time limit, into `fold`; an isError result when it
 * timed out or failed (`what` names it in the text), undefined when it ended. The client's
 * cancellation cancels the query and throws.
 */
export async function runQuery(
  call: ToolCall,
  request: AskRequest,
  fold: AnswerFold,
  what: string,
  onTool?: (m: Message) => Promise<void>,
): Promise<CallToolResult | undefined> {
  const { callTimeoutMs, onQuery } = call.deps;
  const run = await runAsk(call.deps.bus, request, {
    timeoutMs: callTimeoutMs + 1_000,
    stopAfterMs: callTimeoutMs,
    signal: call.extra.signal,
    traceparent: call.traceparent(),
    onMessage: (m) => notify(call, fold, request.queryId, m, onTool),
    ...(onQuery ? { onQuery } : {}),
  });
  if (run.error === undefined) return undefined;
  if (call.extra.signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'cancelled by the client');
  if (run.timedOut) {
    const n = fold.answer.results.length;
    const partial = n ? ` ${n} results had arrived before it was stopped.` : '';
    return toolResult(
      `${what} did not finish within ${seconds(callTimeoutMs)} and was stopped.${partial} ` +
        'Try again, ask about one site (list_sites shows them), or make the question narrower.',
      undefined,
      true,
    );
  }
  return toolResult(`${what} failed: ${failureOf(run.error, ROUTER).error}`, undefined, true);
}

/** Asks the user the router's question; their answer, or undefined when they do not give one. */
async function elicit(call: ToolCall, question: string): Promise<string | undefined> {
  // Form mode: `elicitation: {}` (2025-06-18) or `elicitation: { form: {} }` (2025-11-25).
  const caps = call.session.server.getClientCapabilities()?.elicitation as
    Record<string, unknown> | undefined;
  if (!caps || (Object.keys(caps).length > 0 && !caps.form)) return undefined;
  const reply = await call.extra.sendRequest(
    {
      method: 'elicitation/create',
      params: {
        message: question,
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', title: 'Your answer', description: question } },
          required: ['answer'],
        },
      },
    },
    ElicitResultSchema,
    { timeout: call.deps.elicitTimeoutMs },
  );
  const answer = reply.action === 'accept' ? reply.content?.answer : undefined;
  return typeof answer === 'string' && answer.trim() ? answer.trim() : undefined;
}

export async function askTool(call: ToolCall, args: AskArgs): Promise<CallToolResult> {
  const parsed = askRequest({
    query: args.query,
    site: args.site,
    prev: args.prev,
    mode: args.mode ?? args.generate_mode,
    maxResults: args.max_results,
  });
  if (!parsed.success) throw badParams(`Invalid arguments for tool ask: ${issueText(parsed.error)}`);
  let request = parsed.data;
  const fold = new AnswerFold(request);
  const out = fold.answer;
  for (let round = 0; ; round++) {
    const failed = await runQuery(call, request, fold, `The search for "${request.query}"`);
    if (failed) return failed;
    if (!out.ask_user || out.results.length > 0 || round >= MAX_ELICIT_ROUNDS) break;
    let answer: string | undefined;
    try {
      answer = await elicit(call, out.ask_user);
    } catch {
      answer = undefined;
    }
    if (answer === undefined) break;
    // The user's answer is the next turn of the conversation, as NLWeb's chat would send it.
    const next = askRequest({
      ...request,
      queryId: newQueryId(),
      query: answer,
      prev: [...request.prev, request.query].slice(-50),
    });
    if (!next.success) break;
    request = next.data;
    fold.restart(request);
  }
  return toolResult(renderAsk(out), out);
}
