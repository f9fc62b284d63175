/**
 * One MCP server per session (Streamable HTTP), per request (stateless JSON-RPC POST) or per
 * socket (WebSocket), on the SDK's low-level Server: tools ask, list_sites, who, details and
 * compare run over the bus; progress, logging, elicitation and cancellation map onto the bus's
 * query.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  ErrorCode,
  LoggingLevelSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolResult,
  LoggingLevel,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { context, trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { z } from 'zod';
import { newTraceparent, parseTraceparent } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { AskRequest, CompareItems, ItemDetails, contracts } from '@askbus/contracts';
import type { Message, ResultItem } from '@askbus/contracts';
import { failureOf } from '../errors';
import { rankSites } from '../who';
import {
  AskArgs,
  CompareArgs,
  DetailsArgs,
  TOOL_DEFS,
  WhoArgs,
  compareQuery,
  detailsQuery,
  emptyAskOutput,
  issueText,
  jsonSchema,
  namesAmbiguous,
  renderAsk,
  renderCompare,
  renderDetails,
  renderSites,
  renderWho,
} from './tools';
import type { AskOutput, CompareOutput, DetailsOutput, ListSitesOutput, WhoOutput } from './tools';

export interface McpServerDeps {
  bus: Bus;
  version: string;
  /** Time limit of one tool call on the bus (ms). */
  callTimeoutMs: number;
  /** How long an elicitation may wait for the user (ms). */
  elicitTimeoutMs: number;
  /** Called with each query id a tool starts, and again when it ends (tests, metrics). */
  onQuery?: (queryId: string, state: 'start' | 'end') => void;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const ROUTER = 'the askbus router';
const RETRIEVER = 'the askbus retriever';
const MAX_ELICIT_ROUNDS = 3;
const SEVERITY = new Map(LoggingLevelSchema.options.map((l, i) => [l, i]));

// Loose request schemas: the SDK would answer malformed params of its own schemas with -32603;
// parsing them here gives the -32602 JSON-RPC asks for.
const LooseCall = z.looseObject({ method: z.literal('tools/call'), params: z.unknown().optional() });
const LooseSetLevel = z.looseObject({
  method: z.literal('logging/setLevel'),
  params: z.unknown().optional(),
});
const CallParams = z.looseObject({
  name: z.string({ error: 'params.name must be a tool name' }),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

const badParams = (message: string): McpError => new McpError(ErrorCode.InvalidParams, message);

/** `site` as a list of names: comma lists split, blanks dropped, `all` when none. */
function siteNames(site: string | string[] | undefined): string[] {
  const parts = (Array.isArray(site) ? site : [site ?? '']).flatMap((s) => s.split(','));
  const names = [...new Set(parts.map((s) => s.trim().replace(/ /g, '_')).filter(Boolean))];
  if (names.length === 0 || names.some((n) => n.toLowerCase() === 'all')) return ['all'];
  return names;
}

/**
 * Key under AuthInfo.extra of the OpenTelemetry context active when the MCP HTTP request
 * arrived (the plugin puts it there; the SDK hands authInfo to the tool call as extra.authInfo).
 */
export const OTEL_CONTEXT = 'askbus.otelContext';

/** The HTTP request's context when it holds a recording span (OpenTelemetry on), else undefined. */
function requestContext(extra: Extra): Context | undefined {
  const ctx = extra.authInfo?.extra?.[OTEL_CONTEXT] as Context | undefined;
  return ctx && trace.getSpan(ctx)?.isRecording() ? ctx : undefined;
}

/**
 * The trace a tool call's bus calls join, as /ask does it: with a recording span for the HTTP
 * request, none (the bus takes the active context, which the tools/call handler sets); otherwise the
 * incoming W3C traceparent when it is valid, else a new trace.
 */
function traceparentOf(extra: Extra): string | undefined {
  if (requestContext(extra) ?? trace.getSpan(context.active())?.isRecording()) return undefined;
  const h = extra.requestInfo?.headers.traceparent;
  const value = Array.isArray(h) ? h[0] : h;
  return value && parseTraceparent(value) ? value.trim() : newTraceparent();
}

const toolResult = (text: string, structured?: object, isError = false): CallToolResult => ({
  content: [{ type: 'text', text }],
  ...(structured ? { structuredContent: structured as Record<string, unknown> } : {}),
  ...(isError ? { isError: true } : {}),
});

export function createMcpServer(deps: McpServerDeps): Server {
  const { bus } = deps;
  const server = new Server(
    { name: 'askbus', title: 'askbus', version: deps.version },
    {
      capabilities: { tools: {}, logging: {} },
      instructions:
        "askbus answers questions about the loaded sites' schema.org data. Use list_sites to see the sites, " +
        'who to find which sites can answer a question, ask to get ranked items, details to learn about one ' +
        'named item and compare to compare two.',
    },
  );

  // notifications/message below this level are not sent; clients change it with logging/setLevel.
  let minLevel: LoggingLevel = 'info';
  server.setRequestHandler(LooseSetLevel, async (req) => {
    const level = LoggingLevelSchema.safeParse((req.params as { level?: unknown } | undefined)?.level);
    if (!level.success) {
      throw badParams(`params.level must be one of ${LoggingLevelSchema.options.join(', ')}`);
    }
    minLevel = level.data;
    return {};
  });

  const log = async (extra: Extra, level: LoggingLevel, data: unknown): Promise<void> => {
    if ((SEVERITY.get(level) ?? 0) < (SEVERITY.get(minLevel) ?? 0)) return;
    await extra
      .sendNotification({ method: 'notifications/message', params: { level, logger: 'askbus', data } })
      .catch(() => undefined);
  };

  server.setRequestHandler(
    z.looseObject({ method: z.literal('tools/list'), params: z.unknown().optional() }),
    async () => ({
      tools: TOOL_DEFS.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: jsonSchema(t.input, 'input'),
        outputSchema: jsonSchema(t.output, 'output'),
        annotations: { title: t.title, readOnlyHint: true, openWorldHint: false },
      })),
    }),
  );

  server.setRequestHandler(LooseCall, async (req, extra): Promise<CallToolResult> => {
    const params = CallParams.safeParse(req.params);
    if (!params.success) throw badParams(`Invalid tools/call params: ${issueText(params.error)}`);
    const { name, arguments: args = {} } = params.data;
    // The tool's bus calls run within the HTTP request's span when there is one.
    const ctx = requestContext(extra);
    return ctx ? context.with(ctx, () => callTool(name, args, extra)) : callTool(name, args, extra);
  });

  async function callTool(
    name: string,
    args: Record<string, unknown>,
    extra: Extra,
  ): Promise<CallToolResult> {
    switch (name) {
      case 'ask': {
        const parsed = AskArgs.safeParse(args);
        if (!parsed.success) throw badParams(`Invalid arguments for tool ask: ${issueText(parsed.error)}`);
        return askTool(parsed.data, extra);
      }
      case 'list_sites':
        return listSites(extra);
      case 'who': {
        const parsed = WhoArgs.safeParse(args);
        if (!parsed.success) throw badParams(`Invalid arguments for tool who: ${issueText(parsed.error)}`);
        return whoTool(parsed.data, extra);
      }
      case 'details': {
        const parsed = DetailsArgs.safeParse(args);
        if (!parsed.success)
          throw badParams(`Invalid arguments for tool details: ${issueText(parsed.error)}`);
        return detailsTool(parsed.data, extra);
      }
      case 'compare': {
        const parsed = CompareArgs.safeParse(args);
        if (!parsed.success)
          throw badParams(`Invalid arguments for tool compare: ${issueText(parsed.error)}`);
        if (namesAmbiguous(parsed.data)) {
          throw badParams(
            'Invalid arguments for tool compare: item1 and item2 both contain "and", "or", "vs", "with" or "to"; ' +
              'the compare tool could not tell them apart',
          );
        }
        return compareTool(parsed.data, extra);
      }
      default:
        throw badParams(`Unknown tool: ${name} (tools: ${TOOL_DEFS.map((t) => t.name).join(', ')})`);
    }
  }

  /** A time limit per call, combined with the client's cancellation of the request. */
  function limit(extra: Extra): { signal: AbortSignal; timedOut: () => boolean; dispose: () => void } {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, deps.callTimeoutMs);
    const onAbort = (): void => controller.abort();
    if (extra.signal.aborted) controller.abort();
    else extra.signal.addEventListener('abort', onAbort, { once: true });
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      dispose: () => {
        clearTimeout(timer);
        extra.signal.removeEventListener('abort', onAbort);
      },
    };
  }

  const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

  async function listSites(extra: Extra): Promise<CallToolResult> {
    const lim = limit(extra);
    try {
      const { sites } = await bus.request(
        contracts.sites,
        {},
        { signal: lim.signal, timeoutMs: deps.callTimeoutMs, traceparent: traceparentOf(extra) },
      );
      const out: ListSitesOutput = { sites };
      return toolResult(renderSites(out), out);
    } catch (err) {
      if (lim.timedOut()) {
        return toolResult(
          `Listing the sites did not finish within ${seconds(deps.callTimeoutMs)}; try again later.`,
          undefined,
          true,
        );
      }
      return toolResult(`Could not list the sites: ${failureOf(err, RETRIEVER).error}`, undefined, true);
    } finally {
      lim.dispose();
    }
  }

  async function whoTool(args: WhoArgs, extra: Extra): Promise<CallToolResult> {
    const lim = limit(extra);
    const opts = { signal: lim.signal, timeoutMs: deps.callTimeoutMs, traceparent: traceparentOf(extra) };
    try {
      const out: WhoOutput = {
        query: args.query,
        sites: await rankSites(bus, { query: args.query, maxSites: args.max_sites ?? 10 }, opts),
      };
      return toolResult(renderWho(out), out);
    } catch (err) {
      if (lim.timedOut()) {
        return toolResult(
          `Finding the sites for "${args.query}" did not finish within ${seconds(deps.callTimeoutMs)}; try again later.`,
          undefined,
          true,
        );
      }
      return toolResult(`Could not rank the sites: ${failureOf(err, RETRIEVER).error}`, undefined, true);
    } finally {
      lim.dispose();
    }
  }

  /** Runs one AskRequest over the bus into `out`, sending progress and log notifications. */
  async function runAsk(
    request: AskRequest,
    out: AskOutput,
    extra: Extra,
    signal: AbortSignal,
    step: { n: number },
    onTool?: (m: Message) => Promise<void>,
  ): Promise<void> {
    const progressToken = extra._meta?.progressToken;
    const progress = async (message: string): Promise<void> => {
      if (progressToken === undefined) return;
      await extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: ++step.n, message },
        })
        .catch(() => undefined);
    };
    const seen = new Set(out.results.map((r) => r.url));
    const add = (items: ResultItem[]): void => {
      for (const item of items) {
        if (seen.has(item.url) || out.results.length >= request.maxResults) continue;
        seen.add(item.url);
        out.results.push(item);
      }
    };
    deps.onQuery?.(request.queryId, 'start');
    try {
      const stream = bus.stream(contracts.ask, request, {
        queryId: request.queryId,
        signal,
        timeoutMs: deps.callTimeoutMs + 1_000,
        traceparent: traceparentOf(extra),
      });
      for await (const m of stream) await onMessage(m);
    } finally {
      deps.onQuery?.(request.queryId, 'end');
    }

    async function onMessage(m: Message): Promise<void> {
      switch (m.message_type) {
        case 'begin-nlweb-response':
        case 'end-nlweb-response':
          await log(extra, 'debug', { query_id: request.queryId, message_type: m.message_type });
          return;
        case 'result':
          if (typeof m.content === 'string') {
            out.summary = m.content;
            await progress('summary');
          } else {
            add(m.content);
            await progress(`${out.results.length} result${out.results.length === 1 ? '' : 's'}`);
          }
          return;
        case 'nlws':
          out.answer = m.answer;
          add(m.items);
          await progress('answer');
          return;
        case 'ask_user':
          out.ask_user = m.content;
          await log(extra, 'info', { query_id: request.queryId, ask_user: m.content });
          return;
        case 'intermediate_message':
        case 'status':
        case 'no_results':
        case 'site_is_irrelevant_to_query':
          out.notes.push(m.content);
          await log(extra, 'info', {
            query_id: request.queryId,
            message_type: m.message_type,
            text: m.content,
          });
          await progress(m.content);
          return;
        case 'error':
          out.errors.push(m.error);
          await log(extra, 'warning', { query_id: request.queryId, error: m.error, code: m.code });
          return;
        case 'decontextualized_query':
          await log(extra, 'info', {
            query_id: request.queryId,
            decontextualized_query: m.decontextualized_query,
          });
          return;
        case 'item_details':
        case 'compare_items':
          if (onTool) {
            await onTool(m);
            await progress(m.message_type);
            return;
          }
          await log(extra, 'debug', { query_id: request.queryId, message: m });
          return;
        default:
          await log(extra, 'debug', { query_id: request.queryId, message: m });
      }
    }
  }

  /** Asks the user the router's question; their answer, or undefined when they do not give one. */
  async function elicit(question: string, extra: Extra): Promise<string | undefined> {
    // Form mode: `elicitation: {}` (2025-06-18) or `elicitation: { form: {} }` (2025-11-25).
    const caps = server.getClientCapabilities()?.elicitation as Record<string, unknown> | undefined;
    if (!caps || (Object.keys(caps).length > 0 && !caps.form)) return undefined;
    const reply = await extra.sendRequest(
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
      { timeout: deps.elicitTimeoutMs },
    );
    const answer = reply.action === 'accept' ? reply.content?.answer : undefined;
    return typeof answer === 'string' && answer.trim() ? answer.trim() : undefined;
  }

  /**
   * One query over the bus within the call's time limit, into `out`; an isError result when it
   * timed out or failed (`what` names it in the text), undefined when it ended. The client's
   * cancellation cancels the query and throws.
   */
  async function attempt(
    request: AskRequest,
    out: AskOutput,
    extra: Extra,
    step: { n: number },
    what: string,
    onTool?: (m: Message) => Promise<void>,
  ): Promise<CallToolResult | undefined> {
    const lim = limit(extra);
    try {
      await runAsk(request, out, extra, lim.signal, step, onTool);
      return undefined;
    } catch (err) {
      // Stop the query in every service, whatever stopped it here.
      bus.cancel(request.queryId);
      if (extra.signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'cancelled by the client');
      if (lim.timedOut()) {
        const partial = out.results.length
          ? ` ${out.results.length} results had arrived before it was stopped.`
          : '';
        return toolResult(
          `${what} did not finish within ${seconds(deps.callTimeoutMs)} and was stopped.${partial} ` +
            'Try again, ask about one site (list_sites shows them), or make the question narrower.',
          undefined,
          true,
        );
      }
      return toolResult(`${what} failed: ${failureOf(err, ROUTER).error}`, undefined, true);
    } finally {
      lim.dispose();
    }
  }

  /**
   * Runs `query` with an explicit router tool (details, compare) and hands its answer messages
   * to `onTool`; the other messages fill `out` as for ask. Returns the ask-shaped collection or
   * an isError result.
   */
  async function runTool(
    tool: 'details' | 'compare',
    query: string,
    site: string | string[] | undefined,
    extra: Extra,
    onTool: (m: Message) => Promise<void>,
    what: string,
  ): Promise<AskOutput | CallToolResult> {
    const parsed = AskRequest.safeParse({
      queryId: randomUUID().replaceAll('-', ''),
      query,
      site: siteNames(site),
      tool,
      maxResults: 10,
    });
    if (!parsed.success) throw badParams(`Invalid arguments for tool ${tool}: ${issueText(parsed.error)}`);
    const request = parsed.data;
    const out = emptyAskOutput(request);
    const failed = await attempt(request, out, extra, { n: 0 }, what, onTool);
    if (failed) return failed;
    // The router asked the user something instead of running the tool: pass the question on.
    if (out.ask_user) out.notes.push(`The router asks: ${out.ask_user}`);
    return out;
  }

  const isResult = (r: AskOutput | CallToolResult): r is CallToolResult => 'content' in r;

  async function detailsTool(args: DetailsArgs, extra: Extra): Promise<CallToolResult> {
    let item: ItemDetails | undefined;
    const misread: string[] = [];
    const notFound: string[] = [];
    const query = detailsQuery(args);
    const run = await runTool(
      'details',
      query,
      args.site,
      extra,
      async (m) => {
        if (m.message_type !== 'item_details') return;
        const parsed = ItemDetails.safeParse(m);
        if (!parsed.success)
          misread.push(
            `the details tool sent an answer the gateway cannot read (${issueText(parsed.error)})`,
          );
        // The tool says "not found" as item_details without a url.
        else if (!parsed.data.url) notFound.push(parsed.data.details);
        else item ??= parsed.data;
      },
      `Getting the details for "${query}"`,
    );
    if (isResult(run)) return run;
    const out: DetailsOutput = {
      query_id: run.query_id,
      query: run.query,
      site: run.site,
      notes: [...notFound, ...run.notes],
      errors: [...misread, ...run.errors],
      ...(run.results.length ? { results: run.results } : {}),
      ...(item ? { item } : {}),
    };
    return toolResult(renderDetails(out), out);
  }

  async function compareTool(args: CompareArgs, extra: Extra): Promise<CallToolResult> {
    let comparison: CompareItems | undefined;
    const misread: string[] = [];
    const { query, swapped, note } = compareQuery(args);
    const run = await runTool(
      'compare',
      query,
      args.site,
      extra,
      async (m) => {
        if (m.message_type !== 'compare_items') return;
        const parsed = CompareItems.safeParse(m);
        if (!parsed.success)
          misread.push(
            `the compare tool sent an answer the gateway cannot read (${issueText(parsed.error)})`,
          );
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
      query_id: run.query_id,
      query: run.query,
      site: run.site,
      notes: [...(note ? [note] : []), ...run.notes],
      errors: [...misread, ...run.errors],
      ...(run.results.length ? { results: run.results } : {}),
      ...(comparison ? { comparison } : {}),
    };
    return toolResult(renderCompare(out), out);
  }

  async function askTool(args: AskArgs, extra: Extra): Promise<CallToolResult> {
    let request: AskRequest;
    const parsed = AskRequest.safeParse({
      queryId: randomUUID().replaceAll('-', ''),
      query: args.query,
      site: siteNames(args.site),
      prev: args.prev ?? [],
      mode: args.mode ?? args.generate_mode ?? 'list',
      maxResults: args.max_results ?? 10,
    });
    if (!parsed.success) throw badParams(`Invalid arguments for tool ask: ${issueText(parsed.error)}`);
    request = parsed.data;
    const out = emptyAskOutput(request);
    const step = { n: 0 };
    for (let round = 0; ; round++) {
      const failed = await attempt(request, out, extra, step, `The search for "${request.query}"`);
      if (failed) return failed;
      if (!out.ask_user || out.results.length > 0 || round >= MAX_ELICIT_ROUNDS) break;
      let answer: string | undefined;
      try {
        answer = await elicit(out.ask_user, extra);
      } catch {
        answer = undefined;
      }
      if (answer === undefined) break;
      // The user's answer is the next turn of the conversation, as NLWeb's chat would send it.
      const next = AskRequest.safeParse({
        ...request,
        queryId: randomUUID().replaceAll('-', ''),
        query: answer,
        prev: [...request.prev, request.query].slice(-50),
      });
      if (!next.success) break;
      request = next.data;
      out.query_id = request.queryId;
      out.query = request.query;
      delete out.ask_user;
    }
    return toolResult(renderAsk(out), out);
  }

  return server;
}
