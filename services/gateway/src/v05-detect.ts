/**
 * Which /ask requests speak protocol 0.5 (nlweb-typespec), for the dialect detector (dialect.ts)
 * and the access layer. A body is 0.5 unless it is the v0.55 structured body; a flat request
 * (query string) is 0.5 when it says so (`api_version=0.5`) or when it is NLWeb_Core's page.
 */

type Bag = Record<string, unknown>;

const isRecord = (v: unknown): v is Bag => typeof v === 'object' && v !== null && !Array.isArray(v);

const isV05Version = (v: unknown): boolean => typeof v === 'string' && /^0\.5(?:\.|$)/.test(v.trim());

/**
 * A 0.5 AskRequest body: it has `return_response`, or `meta.api_version` 0.5.x, or it is a
 * structured body (`query` an object) without what only v0.55 sends (`prefer`, `meta.version`)
 * and without an api_version other than 0.5.
 * So the minimal 0.5 request `{"query": {"text": "…"}}` is 0.5.
 */
export function isV05Body(body: Bag): boolean {
  if (body.return_response !== undefined) return true;
  const meta = isRecord(body.meta) ? body.meta : {};
  // An api_version said is taken at its word.
  if (meta.api_version !== undefined) return isV05Version(meta.api_version);
  if (!isRecord(body.query)) return false;
  return body.prefer === undefined && meta.version === undefined;
}

/**
 * Whether a body that is not valid JSON was meant as a 0.5 request, so that its 400 is a 0.5
 * failure: it names a field only 0.5 has (`return_response`, `api_version`), or it opens a
 * structured `query` object and names none of v0.55's (`prefer`, `version`).
 */
export function looksLikeV05Json(text: string): boolean {
  if (/"(?:return_response|api_version)"\s*:/.test(text)) return true;
  return /"query"\s*:\s*\{/.test(text) && !/"(?:prefer|version)"\s*:/.test(text);
}

/** The query-string parameters of NLWeb_Core's page (nlweb-ui/nlweb-chat.js): nothing else. */
export const V05_PAGE_PARAMS: ReadonlySet<string> = new Set(['query', 'site', 'max_results', 'mode']);

/**
 * A flat /ask request (query string, no body) answered in 0.5: `api_version=0.5` (or 0.5.x)
 * says so; and NLWeb_Core's 0.5 page, which opens an EventSource on
 * `GET /ask?query=…&site=…&max_results=50&mode=list`, is told apart from NLWeb's 2025 clients
 * by sending exactly those parameters, `mode` among them, and asking for text/event-stream.
 * NLWeb's 2025 pages always send some parameter of their own (generate_mode, prev,
 * item_to_remember, display_mode, thread_id, …) and askbus's own clients send `streaming`; a
 * bare `GET /ask?query=…` (curl) has no `mode` and no SSE Accept, and stays 2025.
 */
export function isV05FlatRequest(query: Bag, hasBody: boolean, accept: string | undefined): boolean {
  const apiVersion = Array.isArray(query.api_version) ? query.api_version[0] : query.api_version;
  if (apiVersion !== undefined) return isV05Version(apiVersion);
  if (hasBody) return false;
  const keys = Object.keys(query);
  return (
    keys.includes('mode') &&
    keys.every((k) => V05_PAGE_PARAMS.has(k)) &&
    /\btext\/event-stream\b/i.test(accept ?? '')
  );
}
