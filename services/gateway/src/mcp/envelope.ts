/**
 * JSON-RPC 2.0 envelope checks in front of the MCP SDK's transports. The SDK answers any body that
 * is JSON but not a valid message (wrong jsonrpc, an id of a wrong type, params that are not an
 * object …) with -32700 Parse error, and rejects a whole batch for one bad element; JSON-RPC wants
 * -32600 Invalid Request (-32602 Invalid params, -32601 Method not found) per message.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export type RpcId = string | number | null;

export interface RpcErrorAnswer {
  jsonrpc: '2.0';
  id: RpcId;
  error: { code: number; message: string };
}

/** The SDK's own limit on the number of messages in one batch. */
export const MAX_BATCH = 100;

/** MCP versions whose spec has JSON-RPC batches (added in 2025-03-26, removed in 2025-06-18). */
const BATCHES_UNTIL = '2025-03-26';

export const rpcErrorAnswer = (code: number, message: string, id: RpcId = null): RpcErrorAnswer => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

export type MessageCheck =
  | { ok: true; message: JSONRPCMessage }
  /** `silent`: a well-formed notification with bad params; JSON-RPC answers no notification. */
  | { ok: false; answer: RpcErrorAnswer; silent: boolean };

export interface CheckOptions {
  /** Whether the server has a request handler for `method` (for -32601 against -32602). */
  handles: (method: string) => boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const validId = (v: unknown): v is string | number =>
  typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

const ENVELOPE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/** Checks one message, most basic fault first, so that the code names what is wrong. */
export function checkMessage(v: unknown, opts: CheckOptions): MessageCheck {
  const invalid = (message: string, id: RpcId = null): MessageCheck => ({
    ok: false,
    answer: rpcErrorAnswer(-32600, `Invalid Request: ${message}`, id),
    silent: false,
  });
  if (!isRecord(v)) return invalid('a JSON-RPC message is an object');
  // An id that is present but not a string or an integer cannot be echoed: the answer has id null.
  if ('id' in v && !validId(v.id)) return invalid('id must be a string or an integer');
  const id = validId(v.id) ? v.id : null;
  if (v.jsonrpc !== '2.0') return invalid('jsonrpc must be "2.0"', id);
  const extra = Object.keys(v).find((k) => !ENVELOPE_KEYS.has(k));
  if (extra !== undefined) return invalid(`unknown member ${JSON.stringify(extra.slice(0, 40))}`, id);
  if ('method' in v) {
    if (typeof v.method !== 'string') return invalid('method must be a string', id);
    if ('result' in v || 'error' in v) return invalid('a request has no result or error', id);
    if ('params' in v && (typeof v.params !== 'object' || v.params === null))
      return invalid('params must be an object', id);
    const isRequest = 'id' in v;
    const schema = isRequest ? JSONRPCRequestSchema : JSONRPCNotificationSchema;
    const parsed = schema.safeParse(v);
    if (parsed.success) return { ok: true, message: parsed.data };
    // Left: params that are an array, or whose _meta is malformed: a fault of the params.
    if (isRequest && !opts.handles(v.method))
      return {
        ok: false,
        answer: rpcErrorAnswer(-32601, `Method not found: ${v.method.slice(0, 100)}`, id),
        silent: false,
      };
    return {
      ok: false,
      answer: rpcErrorAnswer(
        -32602,
        Array.isArray(v.params)
          ? 'Invalid params: MCP params are an object, not an array'
          : 'Invalid params: params._meta is malformed',
        id,
      ),
      silent: !isRequest,
    };
  }
  if ('result' in v === 'error' in v) return invalid('a message has a method, a result or an error', id);
  const schema = 'result' in v ? JSONRPCResultResponseSchema : JSONRPCErrorResponseSchema;
  const parsed = schema.safeParse(v);
  return parsed.success ? { ok: true, message: parsed.data } : invalid('malformed response', id);
}

export type BodyCheck =
  /** Refuse the whole body with HTTP 400 and this answer (an array for a batch). */
  | { ok: false; answer: RpcErrorAnswer | RpcErrorAnswer[] }
  /**
   * Hand `body` (the valid messages) to the SDK; `errors` are the answers of a batch's invalid
   * elements, to be added to the SDK's answers.
   */
  | { ok: true; body: JSONRPCMessage | JSONRPCMessage[]; errors: RpcErrorAnswer[]; batch: boolean };

/**
 * Checks a parsed body: one message, or a batch where the protocol version allows one (the
 * Mcp-Protocol-Version header; without it MCP assumes 2025-03-26, which has batches).
 */
export function checkBody(body: unknown, protocolVersion: string | undefined, opts: CheckOptions): BodyCheck {
  if (!Array.isArray(body)) {
    const one = checkMessage(body, opts);
    return one.ok
      ? { ok: true, body: one.message, errors: [], batch: false }
      : { ok: false, answer: one.answer };
  }
  // An unsupported version is left to the SDK, which refuses it with its own answer.
  if (
    protocolVersion !== undefined &&
    SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion) &&
    protocolVersion > BATCHES_UNTIL
  )
    return {
      ok: false,
      answer: rpcErrorAnswer(
        -32600,
        `Invalid Request: MCP ${protocolVersion.slice(0, 20)} has no JSON-RPC batches; send one message per request`,
      ),
    };
  if (body.length === 0) return { ok: false, answer: rpcErrorAnswer(-32600, 'Invalid Request: empty batch') };
  if (body.length > MAX_BATCH)
    return {
      ok: false,
      answer: rpcErrorAnswer(-32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`),
    };
  const messages: JSONRPCMessage[] = [];
  const errors: RpcErrorAnswer[] = [];
  // The SDK pairs answers with requests by id: a second request with the same id would lose one.
  const ids = new Set<string | number>();
  let unanswered: RpcErrorAnswer | undefined;
  for (const item of body) {
    const one = checkMessage(item, opts);
    if (!one.ok) {
      if (one.silent) unanswered = one.answer;
      else errors.push(one.answer);
      continue;
    }
    const m = one.message;
    if ('method' in m && 'id' in m) {
      if (ids.has(m.id)) {
        errors.push(rpcErrorAnswer(-32600, `Invalid Request: id ${JSON.stringify(m.id)} is used twice`));
        continue;
      }
      ids.add(m.id);
    }
    messages.push(m);
  }
  // Nothing to hand over: a 400 with the answers (or, when all were notifications, one of them).
  if (messages.length === 0) return { ok: false, answer: errors.length > 0 ? errors : unanswered! };
  return { ok: true, body: messages, errors, batch: true };
}

/**
 * The request methods a server answers (for -32601 against -32602). Read from the SDK's handler
 * map; if a later SDK hides it, every method counts as known (the answer is then -32602).
 */
export function requestMethods(server: Server): (method: string) => boolean {
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map) || handlers.size === 0) return () => true;
  const known = new Set([...handlers.keys()].filter((k): k is string => typeof k === 'string'));
  return (method) => known.has(method);
}
