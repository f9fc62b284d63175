import { z } from 'zod';
import { LlmError } from './errors';

/**
 * Each schema's JSON Schema, made once: converting costs more than a local model's whole answer,
 * and the same few schemas are asked for on every query. Callers only read it.
 */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

/** JSON Schema of a zod schema, for response_format and for instructions (read it, do not change it). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let out = jsonSchemas.get(schema);
  if (!out) {
    out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete out.$schema;
    jsonSchemas.set(schema, out);
  }
  return out;
}

/**
 * The JSON value in a model's answer: markdown fences stripped, else the first balanced
 * `{…}` or `[…]`. Throws LlmError('malformed') when there is none.
 */
export function extractJson(text: string): unknown {
  const trimmed = text.trim();
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(trimmed);
  const candidates = [fenced?.[1]?.trim(), trimmed, firstBalanced(trimmed)];
  for (const c of candidates) {
    if (!c) continue;
    try {
      return JSON.parse(c);
    } catch {
      // try the next reading
    }
  }
  throw new LlmError('malformed', `the answer is not JSON: ${JSON.stringify(trimmed.slice(0, 120))}`);
}

function firstBalanced(text: string): string | undefined {
  const start = text.search(/[[{]/);
  if (start < 0) return undefined;
  const open = text[start]!;
  const close = open === '{' ? '}' : ']';
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === open) depth++;
    else if (ch === close && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/** Parses a model's answer with a zod schema; anything else is LlmError('malformed'). */
export function parseAnswer<S extends z.ZodType>(schema: S, text: string): z.infer<S> {
  const value = extractJson(text);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LlmError(
      'malformed',
      `the answer does not match the schema at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  return parsed.data;
}
