/**
 * One MCP server per session (Streamable HTTP), per request (stateless JSON-RPC POST) or per
 * socket (WebSocket), on the SDK's low-level Server: tools ask, list_sites, who, details and
 * compare run over the bus (ask-tool.ts, item-tools.ts, site-tools.ts); progress, logging,
 * elicitation and cancellation map onto the bus's query.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { LoggingLevelSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { context } from '@opentelemetry/api';
import { z } from 'zod';
import { askTool } from './ask-tool';
import { badParams, requestContext, ToolCall } from './call';
import type { McpServerDeps, McpSession } from './call';
import { compareTool, detailsTool } from './item-tools';
import { listSitesTool, whoTool } from './site-tools';
import { AskArgs, WhoArgs, issueText } from '../ask/skills';
import { CompareArgs, DetailsArgs, TOOL_DEFS, jsonSchema, namesAmbiguous } from './tools';

export { OTEL_CONTEXT } from './call';
export type { McpServerDeps } from './call';

// Loose request schemas: the SDK would answer malformed params of its own schemas with -32603;
// parsing them here gives the -32602 JSON-RPC asks for.
const LooseCall = z.looseObject({ method: z.literal('tools/call'), params: z.unknown().optional() });
const LooseList = z.looseObject({ method: z.literal('tools/list'), params: z.unknown().optional() });
const LooseSetLevel = z.looseObject({
  method: z.literal('logging/setLevel'),
  params: z.unknown().optional(),
});
const CallParams = z.looseObject({
  name: z.string({ error: 'params.name must be a tool name' }),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

/** The tool's arguments through its schema: -32602 naming the first issue when they do not fit. */
function argsOf<S extends z.ZodType>(tool: string, schema: S, args: unknown): z.infer<S> {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw badParams(`Invalid arguments for tool ${tool}: ${issueText(parsed.error)}`);
  return parsed.data;
}

function callTool(call: ToolCall, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  switch (name) {
    case 'ask':
      return askTool(call, argsOf(name, AskArgs, args));
    case 'list_sites':
      return listSitesTool(call);
    case 'who':
      return whoTool(call, argsOf(name, WhoArgs, args));
    case 'details':
      return detailsTool(call, argsOf(name, DetailsArgs, args));
    case 'compare': {
      const parsed = argsOf(name, CompareArgs, args);
      if (namesAmbiguous(parsed)) {
        throw badParams(
          'Invalid arguments for tool compare: item1 and item2 both contain "and", "or", "vs", "with" or "to"; ' +
            'the compare tool could not tell them apart',
        );
      }
      return compareTool(call, parsed);
    }
    default:
      throw badParams(`Unknown tool: ${name} (tools: ${TOOL_DEFS.map((t) => t.name).join(', ')})`);
  }
}

export function createMcpServer(deps: McpServerDeps): Server {
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
  const session: McpSession = { deps, server, minLevel: 'info' };

  server.setRequestHandler(LooseSetLevel, async (req) => {
    const level = LoggingLevelSchema.safeParse((req.params as { level?: unknown } | undefined)?.level);
    if (!level.success) {
      throw badParams(`params.level must be one of ${LoggingLevelSchema.options.join(', ')}`);
    }
    session.minLevel = level.data;
    return {};
  });

  server.setRequestHandler(LooseList, async () => ({
    tools: TOOL_DEFS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: jsonSchema(t.input, 'input'),
      outputSchema: jsonSchema(t.output, 'output'),
      annotations: { title: t.title, readOnlyHint: true, openWorldHint: false },
    })),
  }));

  server.setRequestHandler(LooseCall, async (req, extra): Promise<CallToolResult> => {
    const params = CallParams.safeParse(req.params);
    if (!params.success) throw badParams(`Invalid tools/call params: ${issueText(params.error)}`);
    const { name, arguments: args = {} } = params.data;
    const call = new ToolCall(session, extra);
    // The tool's bus calls run within the HTTP request's span when there is one.
    const ctx = requestContext(extra);
    return ctx ? context.with(ctx, () => callTool(call, name, args)) : callTool(call, name, args);
  });

  return server;
}
