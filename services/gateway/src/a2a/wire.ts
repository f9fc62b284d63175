/**
 * Bodies that @a2a-js/sdk 1.3's proto decoding (the generated `fromJSON`) cannot take: it calls
 * String()/Number() on members, Buffer.from() on `raw` and reads members of each part, so an
 * object with a `toString` or `valueOf` member that is no function, a `raw` that is no string or
 * a part that is null throws a TypeError, which the SDK answers with HTTP 500 (REST) or -32603
 * (JSON-RPC) and logs nowhere. These are the client's faults: the caller answers them as such.
 */
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why the SDK could not take `body` (whose send message, if it is one, is `message`); else
 * undefined. REST bodies must be objects: for a tenant path the SDK sets `body.tenant` (a
 * TypeError on a string).
 */
export function undecodable(
  kind: 'jsonrpc' | 'rest',
  body: unknown,
  message: { parts?: unknown } | undefined,
): string | undefined {
  if (kind === 'rest' && !isRecord(body)) return 'the body must be a JSON object';
  if (message && Array.isArray(message.parts)) {
    for (const [i, part] of message.parts.entries()) {
      if (!isRecord(part)) return `message.parts[${i}] must be an object`;
      if (part.raw !== undefined && part.raw !== null && typeof part.raw !== 'string')
        return `message.parts[${i}].raw must be a base64 string`;
    }
  }
  // A walk with its own stack: bodies may be nested deeper than the call stack allows.
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...v);
    else if (isRecord(v)) {
      if (Object.hasOwn(v, 'toString') || Object.hasOwn(v, 'valueOf'))
        return 'members named toString or valueOf are not accepted';
      for (const k in v) stack.push(v[k]);
    }
  }
  return undefined;
}
