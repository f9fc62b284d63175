/** The model of the gateway's answers to MCP JSON-RPC messages (mcp/envelope.ts), for the properties. */
import fc from 'fast-check';

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const validId = (v: unknown): v is string | number => typeof v === 'string' || Number.isSafeInteger(v);

/** The request methods the gateway's MCP server has handlers for (resources/list, prompts/list: none). */
export const MCP_HANDLED = ['initialize', 'ping', 'tools/list', 'tools/call', 'logging/setLevel'];

/**
 * A message's fault: -32600 for the envelope (with its id when that is a valid one, else null);
 * for params that are JSON but not MCP's (an array, a malformed _meta) -32602, or -32601 for a request of an
 * unknown method. `silent`: a notification, which gets no answer inside a batch.
 */
export function mcpFault(e: unknown): { code: number; id: unknown; silent: boolean } | undefined {
  if (!isRecord(e)) return { code: -32600, id: null, silent: false };
  if ('id' in e && !validId(e.id)) return { code: -32600, id: null, silent: false };
  const id = validId(e.id) ? e.id : null;
  if (e.jsonrpc !== '2.0' || typeof e.method !== 'string') return { code: -32600, id, silent: false };
  if ('params' in e && (typeof e.params !== 'object' || e.params === null))
    return { code: -32600, id, silent: false };
  const meta = isRecord(e.params) ? e.params._meta : undefined;
  const metaBad =
    meta !== undefined && (!isRecord(meta) || ('progressToken' in meta && !validId(meta.progressToken)));
  if (Array.isArray(e.params) || metaBad) {
    if (!('id' in e)) return { code: -32602, id: null, silent: true };
    return { code: MCP_HANDLED.includes(e.method) ? -32602 : -32601, id, silent: false };
  }
  return undefined;
}

/** What one element of a batch gets: an error with this code and id, the server's answer, or nothing. */
export function expectedInBatch(e: unknown): { code: number; id: unknown } | 'server' | 'none' {
  const fault = mcpFault(e);
  if (fault) return fault.silent ? 'none' : { code: fault.code, id: fault.id };
  return isRecord(e) && 'id' in e ? 'server' : 'none';
}

/** Text that tests unicode handling: astral planes, combining marks, RTL, NUL, lone surrogates. */
export const unicodeText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('\u0000', '\uD800', '\uDFFF', '🦄🦄', 'e\u0301', '\u202Eabc', '\uFEFF', '\u2028'),
);

/** One MCP message with any member missing or of a wrong type, or no object at all. */
export const mcpElement = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom<unknown>(1, null, 'x', [], {}, [{}], true) },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        jsonrpc: fc.oneof(
          { weight: 4, arbitrary: fc.constant<unknown>('2.0') },
          { weight: 1, arbitrary: fc.constantFrom<unknown>('1.0', 2, null) },
        ),
        id: fc.oneof(
          {
            weight: 4,
            arbitrary: fc.oneof(
              fc.nat({ max: 1_000 }),
              unicodeText.filter((s) => s !== ''),
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 1.5, true, {}, [], 2 ** 60) },
        ),
        method: fc.oneof(
          {
            weight: 4,
            arbitrary: fc.constantFrom<unknown>('ping', 'tools/list', 'tools/call', 'logging/setLevel'),
          },
          { weight: 1, arbitrary: fc.constantFrom<unknown>('no/such', 'resources/list', 1, null, '') },
          { weight: 1, arbitrary: unicodeText },
        ),
        params: fc.oneof(
          fc.constantFrom<unknown>({}, [], [1], 'x', 0, null, { level: 'debug' }, { name: 'list_sites' }),
          fc.constantFrom<unknown>(
            { _meta: 1 },
            { _meta: { progressToken: {} } },
            { name: 'who', arguments: 1 },
          ),
          fc.dictionary(unicodeText, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
        ),
      },
      { requiredKeys: ['jsonrpc'] },
    ),
  },
);
