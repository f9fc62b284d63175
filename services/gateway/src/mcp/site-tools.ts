/** MCP's `list_sites` and `who` tools. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { contracts } from '@askbus/contracts';
import { failureOf } from '../errors';
import { RETRIEVER } from '../ask/runner';
import { renderSites, renderWho } from '../ask/skills';
import type { ListSitesOutput, WhoArgs, WhoOutput } from '../ask/skills';
import { rankSites, whoFailure } from '../ask/who';
import { seconds, toolResult } from './call';
import type { ToolCall } from './call';

export async function listSitesTool(call: ToolCall): Promise<CallToolResult> {
  const lim = call.limit();
  const { callTimeoutMs } = call.deps;
  try {
    const { sites } = await call.deps.bus.request(
      contracts.sites,
      {},
      { signal: lim.signal, timeoutMs: callTimeoutMs, traceparent: call.traceparent() },
    );
    const out: ListSitesOutput = { sites };
    return toolResult(renderSites(out), out);
  } catch (err) {
    if (lim.timedOut()) {
      return toolResult(
        `Listing the sites did not finish within ${seconds(callTimeoutMs)}; try again later.`,
        undefined,
        true,
      );
    }
    return toolResult(`Could not list the sites: ${failureOf(err, RETRIEVER).error}`, undefined, true);
  } finally {
    lim.dispose();
  }
}

export async function whoTool(call: ToolCall, args: WhoArgs): Promise<CallToolResult> {
  const lim = call.limit();
  const { callTimeoutMs } = call.deps;
  const opts = { signal: lim.signal, timeoutMs: callTimeoutMs, traceparent: call.traceparent() };
  try {
    const out: WhoOutput = {
      query: args.query,
      sites: await rankSites(call.deps.bus, { query: args.query, maxSites: args.max_sites ?? 10 }, opts),
    };
    return toolResult(renderWho(out), out);
  } catch (err) {
    if (lim.timedOut()) {
      return toolResult(
        `Finding the sites for "${args.query}" did not finish within ${seconds(callTimeoutMs)}; try again later.`,
        undefined,
        true,
      );
    }
    return toolResult(`Could not rank the sites: ${whoFailure(err).error}`, undefined, true);
  } finally {
    lim.dispose();
  }
}
