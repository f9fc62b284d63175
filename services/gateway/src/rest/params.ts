/**
 * What the REST dialects' parsers share: the parameter bag, its scalar and list readers, the
 * site list (the runner's siteNames), bodies as bags, and how a bad value is shown.
 */
import { z } from 'zod';
import { SiteName } from '@askbus/contracts';
import { siteNames } from '../ask/runner';
import { BadRequestError } from '../errors';
import { V05BadRequestError } from '../v05';
import { looksLikeV05Json } from '../v05-detect';

export type Bag = Record<string, unknown>;

export const isRecord = (v: unknown): v is Bag => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Repeated query-string keys take the first value; numbers and booleans become text. */
export function scalar(v: unknown): unknown {
  const x = Array.isArray(v) ? v[0] : v;
  if (typeof x === 'number' || typeof x === 'boolean') return String(x);
  return x === null ? undefined : x;
}

/** Like `scalar`, but an empty value counts as not given. */
export function optional(v: unknown): unknown {
  const x = scalar(v);
  return typeof x === 'string' && x.trim() === '' ? undefined : x;
}

export const lowerOptional = (v: unknown): unknown => {
  const x = optional(v);
  return typeof x === 'string' ? x.trim().toLowerCase() : x;
};

export const INVALID = Symbol('invalid');

/**
 * ` (got …)`: the start of a value as JSON, for error messages. A value too deep to serialise
 * (10 000 nested arrays) must not turn a 400 into a stack overflow and a 500.
 */
export function shownValue(given: unknown): string {
  if (given === undefined) return '';
  let text: string | undefined;
  try {
    text = JSON.stringify(given);
  } catch {
    text = Array.isArray(given) ? '[…]' : typeof given === 'object' && given !== null ? '{…}' : String(given);
  }
  return text === undefined ? '' : ` (got ${text.slice(0, 80)})`;
}

/** `site`: comma lists, JSON arrays or repeated keys; spaces become `_`; empty means `all`. */
export function siteList(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  const parts = (Array.isArray(v) ? v : [v]).flatMap((x): (string | typeof INVALID)[] => {
    if (typeof x === 'number') return [String(x)];
    if (typeof x !== 'string') return [INVALID];
    return x.split(',');
  });
  if (parts.includes(INVALID)) return parts;
  return siteNames(parts as string[]);
}

/** One previous query: a string, or NLWeb's `{query}` (or `{text}`) object. */
export function prevEntry(x: unknown): unknown {
  if (typeof x === 'string') return x;
  if (isRecord(x)) {
    if (typeof x.query === 'string') return x.query;
    if (typeof x.text === 'string') return x.text;
  }
  return INVALID;
}

/** `prev`: a comma list, a JSON array (text or parsed) of strings or `{query}` objects. */
export function prevList(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  let entries: unknown[];
  if (Array.isArray(v)) entries = v.map(prevEntry);
  else if (typeof v === 'string') {
    const s = v.trim();
    if (s.startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(s);
      } catch {
        // NLWeb's own fallback: strip the brackets and split on commas.
        parsed = s
          .slice(1, s.endsWith(']') ? -1 : undefined)
          .split(',')
          .map((p) => p.trim().replace(/^"(.*)"$/, '$1'));
      }
      entries = Array.isArray(parsed) ? parsed.map(prevEntry) : [INVALID];
    } else entries = s.split(',');
  } else if (isRecord(v)) entries = [prevEntry(v)];
  else entries = [INVALID];
  if (entries.includes(INVALID)) return entries;
  return (entries as string[]).map((s) => s.trim()).filter((s) => s !== '');
}

/** `streaming`: anything but false/0 streams (NLWeb); not given means stream. */
export function streamingFlag(v: unknown): unknown {
  const x = optional(v);
  if (x === undefined) return true;
  if (typeof x !== 'string') return x;
  return !['false', '0'].includes(x.trim().toLowerCase());
}

export const intParam = (name: string, min: number, max: number) => {
  const msg = `${name} must be an integer from ${min} to ${max}`;
  return z.preprocess(
    optional,
    z
      .string({ error: msg })
      .trim()
      .regex(/^[+-]?\d+$/, msg)
      .transform(Number)
      .pipe(z.number().int(msg).min(min, msg).max(max, msg))
      .optional(),
  );
};

export const modeParam = (name: string) =>
  z.preprocess(
    lowerOptional,
    z
      .enum(['list', 'none', 'summarize', 'generate'], {
        error: `${name} must be one of list, summarize, generate (none means list)`,
      })
      .optional(),
  );

export const textParam = (name: string, max: number) =>
  z.preprocess(
    optional,
    z
      .string({ error: `${name} must be text` })
      .max(max, `${name} is longer than ${max} characters`)
      .optional(),
  );

export const SiteEntry = z.union([z.literal('all'), SiteName], {
  error: 'site names are letters, digits, "_", "." or "-" (comma-separate several sites)',
});

/** A POST body as a parameter bag: JSON objects, form fields, or JSON sent as text. */
export function bodyBag(body: unknown): Bag | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const text = body.toString().trim();
    if (text === '') return undefined;
    if (!text.startsWith('{')) {
      throw new BadRequestError(
        'body',
        'a POST body must be a JSON object or application/x-www-form-urlencoded',
      );
    }
    try {
      return bodyBag(JSON.parse(text));
    } catch (err) {
      if (err instanceof BadRequestError) throw err;
      const message = `the request body is not valid JSON: ${(err as Error).message}`;
      // H5 (protocol 0.5): a 0.5 client's broken body is answered in 0.5 (v05-detect.ts).
      if (looksLikeV05Json(text)) throw new V05BadRequestError('body', message);
      throw new BadRequestError('body', message);
    }
  }
  if (!isRecord(body)) throw new BadRequestError('body', 'a JSON body must be an object of /ask parameters');
  return body;
}

export const sseAccepted = (accept: string | undefined): boolean =>
  /\btext\/event-stream\b/i.test(accept ?? '');

/** A zod issue path as the wire names it: `context.prev[2]`. */
export const pathName = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${String(k)}` : String(k)),
    '',
  );
