/** MCP's `list_sites` and `who` tools. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { contracts } from '@askbus/contracts';
import { failureOf } from '../errors';
import type { Failure } from '../errors';
import { RETRIEVER } from '../ask/runner';
import { renderSites, renderWho } from '../ask/skills';
import type { WhoArgs } from '../ask/skills';
import { rankSites, whoFailure } from '../ask/who';
import { seconds, toolResult } from './call';
import type { ToolCall } from './call';

/**
 * Runs `fn` within the call's time limit: its text and structured result, or an isError result
 * saying what did not finish (`doing`) or failed (`failed` and the failure).
 */
async function timed<T extends object>(
  call: ToolCall,
  fn: (opts: { signal: AbortSignal; timeoutMs: number; traceparent: string | undefined }) => Promise<T>,
  render: (out: T) => string,
  doing: string,
  failed: [string, (err: unknown) => Failure],
): Promise<CallToolResult> {
  const lim = call.limit();
  const { callTimeoutMs } = call.deps;
  try {
    const out = await fn({ signal: lim.signal, timeoutMs: callTimeoutMs, traceparent: call.traceparent() });
    return toolResult(render(out), out);
  } catch (err) {
    if (lim.timedOut()) {
      return toolResult(
        `${doing} did not finish within ${seconds(callTimeoutMs)}; try again later.`,
        undefined,
        true,
      );
    }
    return toolResult(`${failed[0]}: ${failed[1](err).error}`, undefined, true);
  }
}

export const listSitesTool = (call: ToolCall): Promise<CallToolResult> =>
  timed(
    call,
    async (opts) => ({ sites: (await call.deps.bus.request(contracts.sites, {}, opts)).sites }),
    renderSites,
    'Listing the sites',
    ['Could not list the sites', (err) => failureOf(err, RETRIEVER)],
  );

export const whoTool = (call: ToolCall, args: WhoArgs): Promise<CallToolResult> =>
  timed(
    call,
    async (opts) => ({
      query: args.query,
      sites: await rankSites(call.deps.bus, { query: args.query, maxSites: args.max_sites ?? 10 }, opts),
    }),
    renderWho,
    `Finding the sites for "${args.query}"`,
    ['Could not rank the sites', whoFailure],
  );
