/**
 * MCP sessions shared between gateway replicas: what `mcp.v1.session.<sessionId>` carries, and
 * the record of a session every gateway can read (the `askbus_mcp_sessions` KV bucket).
 */
import { z } from 'zod';

/** The client's `initialize` parameters, kept so that another gateway can restore the session. */
export const McpInitializeParams = z
  .object({
    protocolVersion: z.string().max(64),
    capabilities: z.record(z.string(), z.unknown()).default({}),
    // The SDK checks the client's info; here it is only kept and handed back to it.
    clientInfo: z.record(z.string(), z.unknown()).default({}),
  })
  .passthrough();
export type McpInitializeParams = z.infer<typeof McpInitializeParams>;

/** One MCP session, whichever gateway created it. */
export const McpSessionRecord = z.discriminatedUnion('transport', [
  z.object({
    /** Streamable HTTP: any gateway can serve its requests. */
    transport: z.literal('streamable-http'),
    /** The client whose key created it (null: the gateway checks no keys); only it may use it. */
    owner: z.string().nullable(),
    init: McpInitializeParams,
    created: z.number().int(),
  }),
  z.object({
    /** The 2024-11-05 HTTP+SSE transport: its stream lives on one gateway; POSTs are relayed there. */
    transport: z.literal('legacy-sse'),
    owner: z.string().nullable(),
    created: z.number().int(),
  }),
]);
export type McpSessionRecord = z.infer<typeof McpSessionRecord>;

/** A JSON-RPC message as it travels between gateways (each gateway's SDK checks it again). */
const RpcMessage = z.record(z.string(), z.unknown());

/** What travels on `mcp.v1.session.<sessionId>`. */
export const McpSessionEvent = z.discriminatedUnion('type', [
  /** The client answered a server request (elicitation, sampling) on some gateway. */
  z.object({ type: z.literal('replies'), messages: z.array(RpcMessage).min(1).max(100) }),
  /** A legacy-SSE client's POST, for the gateway that holds its stream. */
  z.object({ type: z.literal('legacy-message'), message: z.unknown() }),
  /** The session ended (DELETE, idle): every gateway drops its copy. */
  z.object({ type: z.literal('closed') }),
]);
export type McpSessionEvent = z.infer<typeof McpSessionEvent>;
