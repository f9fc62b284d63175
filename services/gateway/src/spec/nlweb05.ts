/**
 * Checks answers against the JSON Schema of NLWeb protocol 0.5 kept beside this file
 * (nlweb-0.5.schema.json, derived from nlweb-typespec's main.tsp; its $comment says how), with
 * ajv. For tests, and for anyone who wants to check a 0.5 server.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';

const SCHEMA = JSON.parse(readFileSync(new URL('./nlweb-0.5.schema.json', import.meta.url), 'utf8')) as {
  $id: string;
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
ajv.addSchema(SCHEMA);

const compiled = new Map<string, ValidateFunction>();
function validator(def: string): ValidateFunction {
  let v = compiled.get(def);
  if (!v) {
    const found = ajv.getSchema(`${SCHEMA.$id}#/$defs/${def}`);
    if (!found) throw new Error(`no definition ${def} in nlweb-0.5.schema.json`);
    v = found;
    compiled.set(def, v);
  }
  return v;
}

/** The spec's definitions and askbus's additions (see the schema's $comment). */
export type Nlweb05Definition =
  | 'AskRequest'
  | 'AskResponse'
  | 'WhoRequest'
  | 'WhoResponse'
  | 'Agent'
  | 'askbus_AskResponse'
  | 'askbus_AskResponseEvent'
  | 'askbus_WhoResponseEvent';

const describe = (errors: ErrorObject[] | null | undefined): string[] =>
  (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);

/** The schema violations of a value against one definition (empty: it validates). */
export function violations(def: Nlweb05Definition, value: unknown): string[] {
  const v = validator(def);
  return v(value) ? [] : describe(v.errors);
}

/** The violations of a whole Ask answer: the spec's AskResponse plus its at-least-one-text rule. */
export function askResponseViolations(body: unknown): string[] {
  return violations('askbus_AskResponse', body);
}

/** A streamed answer merged as NLWeb_Core merges one: the first `_meta` values win, content in order. */
export function mergeEvents(events: readonly unknown[]): {
  _meta: Record<string, unknown>;
  content: unknown[];
} {
  const meta: Record<string, unknown> = {};
  const content: unknown[] = [];
  for (const e of events) {
    if (typeof e !== 'object' || e === null) continue;
    const { _meta, content: c } = e as { _meta?: unknown; content?: unknown };
    if (typeof _meta === 'object' && _meta !== null) {
      for (const [k, v] of Object.entries(_meta))
        if (k !== '__proto__' && !Object.hasOwn(meta, k)) meta[k] = v;
    }
    if (Array.isArray(c)) content.push(...(c as unknown[]));
  }
  return { _meta: meta, content };
}

/**
 * The violations of a streamed Ask answer (the `data:` of its SSE events, in order): each event
 * must be an askbus_AskResponseEvent, the first must carry `_meta`, only one may say a
 * response_type, and the events merged must be a whole answer.
 */
export function askStreamViolations(events: readonly unknown[]): string[] {
  return streamViolations(events, 'askbus_AskResponseEvent', askResponseViolations);
}

/** The violations of a streamed Who answer, as askStreamViolations. */
export function whoStreamViolations(events: readonly unknown[]): string[] {
  return streamViolations(events, 'askbus_WhoResponseEvent', (b) => violations('WhoResponse', b));
}

function streamViolations(
  events: readonly unknown[],
  eventDef: Nlweb05Definition,
  whole: (body: unknown) => string[],
): string[] {
  const out: string[] = [];
  if (events.length === 0) return ['the stream has no event'];
  events.forEach((e, i) => out.push(...violations(eventDef, e).map((v) => `event ${i}: ${v}`)));
  const first = events[0] as { _meta?: unknown };
  if (typeof first !== 'object' || first === null || first._meta === undefined)
    out.push('event 0: the first event is not the _meta');
  const typed = events.filter(
    (e) =>
      typeof e === 'object' &&
      e !== null &&
      (e as { _meta?: { response_type?: unknown } })._meta?.response_type,
  );
  if (typed.length > 1) out.push(`${typed.length} events say a response_type; one _meta says it`);
  out.push(...whole(mergeEvents(events)).map((v) => `merged: ${v}`));
  return out;
}
