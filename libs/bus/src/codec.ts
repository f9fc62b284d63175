import type { z } from 'zod';
import { BusError } from './errors';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeJson = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));

/** Parses a NATS payload with its schema; anything else is a `code` BusError naming the problem. */
export function decodeWith<S extends z.ZodType>(
  schema: S,
  data: Uint8Array,
  code: 'bad_request' | 'internal',
  what: string,
): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(data));
  } catch {
    throw new BusError(code, `${what} is not JSON`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(root)';
    throw new BusError(code, `${what} is invalid at ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
