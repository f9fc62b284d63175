/**
 * One MCP server per session (Streamable HTTP), per request (stateless JSON-RPC POST) or per
 * socket (WebSocket), on the SDK's low-level Server: tools ask, list_sites and who run over
 * the bus; progress, logging, elicitation and cancellation map onto the bus's query.
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
import { z } from 'zod';
import { newTraceparent, parseTraceparent } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { AskRequest, contracts } from '@askbus/contracts';
import type { Message, ResultItem } from '@askbus/contracts';
import { failureOf } from '../errors';
import { rankSites } from '../who';
import {
  AskArgs,
  TOOL_DEFS,
  WhoArgs,
  issueText,
  jsonSchema,
  renderAsk,
  renderSites,
  renderWho,
} from './tools';
import type { AskOutput, ListSitesOutput, WhoOutput } from './tools';

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

function traceparentOf(extra: Extra): string {
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
        'who to find which sites can answer a question, and ask to get ranked items.',
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
      default:
        throw badParams(`Unknown tool: ${name} (tools: ${TOOL_DEFS.map((t) => t.name).join(', ')})`);
    }
  });

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
    const out: AskOutput = {
      query_id: request.queryId,
      query: request.query,
      site: request.site,
      mode: request.mode,
      results: [],
      notes: [],
      errors: [],
    };
    const step = { n: 0 };
    for (let round = 0; ; round++) {
      const lim = limit(extra);
      try {
        await runAsk(request, out, extra, lim.signal, step);
      } catch (err) {
        // Stop the query in every service, whatever stopped it here.
        bus.cancel(request.queryId);
        if (extra.signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'cancelled by the client');
        if (lim.timedOut()) {
          const partial = out.results.length
            ? ` ${out.results.length} results had arrived before it was stopped.`
            : '';
          return toolResult(
            `The search for "${request.query}" did not finish within ${seconds(deps.callTimeoutMs)} and was stopped.${partial} ` +
              'Try again, ask about one site (list_sites shows them), or make the question narrower.',
            undefined,
            true,
          );
        }
        return toolResult(
          `The search for "${request.query}" failed: ${failureOf(err, ROUTER).error}`,
          undefined,
          true,
        );
      } finally {
        lim.dispose();
      }
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
