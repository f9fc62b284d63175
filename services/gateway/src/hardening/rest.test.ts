/**
 * Property tests of REST /ask (every dialect) and /who on bad input: arbitrary query strings,
 * wrong types at every field of the v0.55 and 0.5 bodies, malformed JSON, wrong content types,
 * huge bodies, floods of ids. Every answer is under 500, every 4xx is JSON in the dialect's own
 * error form, and /health still answers after each batch.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isV05Body } from '../dialect';
import { looksLikeV05Json } from '../v05-detect';
import { SEED, expectHealthy, expectRestAnswer, isSpecialQuery, startWorld } from './world';
import type { ErrorForm, World } from './world';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
});
afterEach(async () => {
  await expectHealthy(world.app);
});

const FC = { seed: SEED, numRuns: 80 } as const;

const ASK_PARAMS = [
  'query',
  'site',
  'prev',
  'mode',
  'generate_mode',
  'streaming',
  'stream',
  'conversation_id',
  'max_results',
  'min_score',
  'query_id',
  'tool',
  'response_format',
  '_protocol_version',
] as const;

/** Unicode edge cases: lone surrogates, RTL and bidi controls, zero-width, NUL, BOM, noncharacters. */
const nastyChar = fc.constantFrom(
  '\uD800',
  '\uDFFF',
  '\uDBFF\uDFFF',
  '\u202E',
  '\u200F',
  'مرحبا',
  'שלום',
  '\u200B',
  '\u200D',
  '\uFEFF',
  '\u0000',
  '\u0007',
  '\uFFFF',
  '\uFFFE',
  '\r\n',
  '\t',
  '😀',
  '👩‍👩‍👧',
  'e\u0301',
  '%',
  '&',
  '=',
  '+',
  '#',
  '[',
  ']',
  ',',
  '"',
  '\\',
  '{}',
);

const nastyString = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(fc.oneof(nastyChar, fc.string({ maxLength: 5 })), { maxLength: 12 })
      .map((a) => a.join('')),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(9_999, 10_000, 10_001, 20_000, 60_000)
      .chain((n) => fc.constantFrom('a', 'é', '\u200B', '😀').map((c) => c.repeat(Math.ceil(n / c.length)))),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'true',
      'false',
      '0',
      '-1',
      '101',
      '1e3',
      'NaN',
      'null',
      '[]',
      '[1,',
      'all',
      'list',
    ),
  },
);

/** Percent-encodes UTF-8 bytes (lone surrogates become U+FFFD, as a browser would send them). */
const pct = (s: string): string =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

/** Raw query-string fragments a client may send as they are: bad escapes, invalid UTF-8, NUL. */
const rawValue = fc.constantFrom(
  '%',
  '%zz',
  '%E',
  '%ED%A0%80',
  '%FF%FE',
  '%C0%AF',
  '%00',
  '%F0%9F%98',
  'a%2',
  '%%%',
);

const queryPair = fc.tuple(
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ASK_PARAMS) }, { weight: 1, arbitrary: nastyString }),
  fc.oneof({ weight: 4, arbitrary: nastyString.map(pct) }, { weight: 1, arbitrary: rawValue }),
);

const queryString = fc
  .array(queryPair, { minLength: 0, maxLength: 8 })
  .map((pairs) =>
    pairs
      .map(
        ([k, v]) =>
          `${typeof k === 'string' && (ASK_PARAMS as readonly string[]).includes(k) ? k : pct(k)}=${v}`,
      )
      .join('&'),
  );

/** Keeps the fake router's special queries (fail, hang …) out of a query string. */
const notSpecialQs = (qs: string): boolean => {
  const q = new URLSearchParams(qs).getAll('query');
  return !q.some(isSpecialQuery);
};

describe('/ask 2025: arbitrary query strings', () => {
  it('GET: status < 500, 4xx in the 2025 error form', async () => {
    await fc.assert(
      fc.asyncProperty(
        queryString,
        fc.constantFrom(undefined, 'text/event-stream', 'application/json'),
        async (qs, accept) => {
          fc.pre(notSpecialQs(qs));
          const res = await world.app.inject({
            method: 'GET',
            url: `/ask?${qs}`,
            headers: accept ? { accept } : {},
          });
          expectRestAnswer(res, 'nlweb', `GET /ask?${qs.slice(0, 200)}`);
        },
      ),
      FC,
    );
  });

  it('GET with a valid query and every other parameter arbitrary', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, async (qs) => {
        const res = await world.app.inject({
          method: 'GET',
          url: `/ask?query=westerns&streaming=false&${qs}`,
        });
        // a repeated query key takes the first value: westerns
        expectRestAnswer(res, 'nlweb', `GET /ask?query=westerns&${qs.slice(0, 200)}`);
      }),
      FC,
    );
  });

  it('POST as a form: status < 500, 4xx in the 2025 error form', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, async (qs) => {
        fc.pre(notSpecialQs(qs));
        const res = await world.app.inject({
          method: 'POST',
          url: '/ask',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: qs,
        });
        expectRestAnswer(res, 'nlweb', `POST form ${qs.slice(0, 200)}`);
      }),
      FC,
    );
  });
});

const V055_BASE = {
  query: { text: 'westerns', site: 'movies' },
  context: { prev: ['older'] },
  prefer: { streaming: false, mode: 'list', response_format: 'conv' },
  meta: { version: '0.55' },
};

const V05_BASE = {
  query: { text: 'westerns', site: ['movies'], type: 'Movie', year: 1990 },
  context: { prev: ['older'], text: 'context', memory: ['likes westerns'] },
  return_response: { streaming: false, format: 'chatgpt_app', mode: 'list', lang: 'en', client_type: 'web' },
  meta: { conversation_id: 'c1', api_version: '0.5', request_id: 'r1' },
};

const FLAT_BASE = { query: 'westerns', site: 'movies', streaming: 'false', max_results: 3 };

/** Every path of a JSON value (objects and arrays), the root included. */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

function setAt(v: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const copy = (Array.isArray(v) ? [...(v as unknown[])] : { ...(v as object) }) as Record<
    string | number,
    unknown
  >;
  copy[head] = setAt(copy[head], rest, value);
  return copy;
}

const deep = (n: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

/** A wrong value for any field: other JSON types, deep nesting, huge arrays and strings. */
const wrongValue = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -1,
      1e308,
      1.5,
      '',
      ' ',
      [],
      {},
      [null],
      [{}],
      [''],
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(10, 100, 2_000).map((n) => deep(n)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(101, 1_000, 50_000).map((n) => Array.from({ length: n }, (_, i) => `s${i}`)),
  },
  { weight: 1, arbitrary: fc.constantFrom(10_001, 200_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: nastyString },
);

/** A base body with 1–3 fields replaced by wrong values (or extra keys added). */
const mutatedBody = (base: object) =>
  fc
    .array(
      fc.tuple(
        fc.constantFrom(...paths(base)),
        fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
        wrongValue,
      ),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((edits) =>
      edits.reduce<unknown>(
        (body, [path, extra, value]) =>
          setAt(body, extra === undefined ? path : [...path.slice(0, -1), extra], value),
        base,
      ),
    );

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The error form an /ask body calls for: 0.5 for a 0.5 body, else 2025 (v0.55 answers in 2025's). */
const formOf = (body: unknown): ErrorForm => (isRecord(body) && isV05Body(body) ? 'v05' : 'nlweb');

const queryTextOf = (body: unknown): unknown =>
  isRecord(body) ? (isRecord(body.query) ? body.query.text : body.query) : undefined;

async function postJson(body: unknown, contentType = 'application/json') {
  const payload = JSON.stringify(body) ?? 'null';
  const res = await world.app.inject({
    method: 'POST',
    url: '/ask',
    headers: { 'content-type': contentType },
    payload,
  });
  // Keys the JSON parser refuses before the dialect is known (prototype poisoning) get 2025's form.
  const form = /"(__proto__|constructor)"/.test(payload) ? undefined : formOf(body);
  expectRestAnswer(res, form, `POST /ask ${payload.slice(0, 300)}`);
  return res;
}

describe('/ask JSON bodies: wrong types at every field', () => {
  for (const [name, base] of [
    ['v0.55', V055_BASE],
    ['0.5', V05_BASE],
    ['flat 2025', FLAT_BASE],
  ] as const) {
    it(`${name}: status < 500, 4xx in the body's dialect`, async () => {
      await fc.assert(
        fc.asyncProperty(mutatedBody(base), async (body) => {
          fc.pre(!isSpecialQuery(queryTextOf(body)));
          await postJson(body);
        }),
        { ...FC, numRuns: 120 },
      );
    });
  }

  it('arbitrary JSON values as the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (body) => {
        fc.pre(!isSpecialQuery(queryTextOf(body)));
        await postJson(body);
      }),
      FC,
    );
  });

  it('valid bodies of every dialect are answered 200', async () => {
    for (const body of [V055_BASE, V05_BASE, FLAT_BASE]) {
      const res = await postJson(body);
      expect(res.statusCode).toBe(200);
    }
  });
});

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/ld+json',
  '',
  ';;;',
  'application/json\u0000',
];

describe('/ask: malformed JSON and wrong content types', () => {
  it('truncated or corrupted bodies under any content type: < 500, JSON 4xx', async () => {
    const texts = [V055_BASE, V05_BASE, FLAT_BASE].map((b) => JSON.stringify(b));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...texts),
        fc.nat(),
        fc.oneof(fc.constant(''), fc.string({ maxLength: 4 }), nastyChar),
        fc.constantFrom(...CONTENT_TYPES),
        async (text, cut, junk, contentType) => {
          const payload = text.slice(0, cut % (text.length + 1)) + junk;
          fc.pre(!['fail', 'hang', 'slow', 'idle'].some((w) => payload.includes(`"${w}`)));
          const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
          const res = await world.app.inject({ method: 'POST', url: '/ask', headers, payload });
          let parsed: unknown;
          try {
            parsed = JSON.parse(payload);
          } catch {
            parsed = undefined;
          }
          // Unparsable bodies: 2025's form, the default of /ask, unless the text looks like a
          // 0.5 request (then 0.5 where the body was read as JSON or text: either form here).
          const form =
            parsed === undefined
              ? looksLikeV05Json(payload)
                ? undefined
                : 'nlweb'
              : contentType.startsWith('application/json')
                ? formOf(parsed)
                : undefined;
          expectRestAnswer(res, form, `POST /ask [${contentType}] ${payload.slice(0, 200)}`);
        },
      ),
      { ...FC, numRuns: 150 },
    );
  });

  it('arbitrary bytes under any content type and method', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 200 }),
        fc.constantFrom(...CONTENT_TYPES),
        fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        fc.constantFrom('/ask', '/who', '/sites', '/ask/', '/Ask', '/ask?query=x'),
        async (bytes, contentType, method, url) => {
          const res = await world.app.inject({
            method: method as 'POST',
            url,
            headers: contentType ? { 'content-type': contentType } : {},
            payload: Buffer.from(bytes),
          });
          expectRestAnswer(res, url === '/who' && method === 'POST' ? 'v05' : undefined, `${method} ${url}`);
        },
      ),
      FC,
    );
  });
});

describe('huge bodies', () => {
  const big = (n: number, v05: boolean) =>
    JSON.stringify(
      v05
        ? { ...V05_BASE, context: { prev: Array.from({ length: n }, () => 'x'.repeat(100)) } }
        : { ...V055_BASE, context: { prev: Array.from({ length: n }, () => 'x'.repeat(100)) } },
    );

  it('a body over the limit is a 413 in JSON, under every content type', async () => {
    for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', '']) {
      for (const v05 of [false, true]) {
        const payload = big(12_000, v05); // ~1.2 MB, over fastify's 1 MiB
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
        const res = await world.app.inject({ method: 'POST', url: '/ask', headers, payload });
        expect(res.statusCode).toBe(413);
        // The dialect of a body refused unread cannot be known: /ask answers in 2025's form.
        expectRestAnswer(res, 'nlweb', `413 ${contentType}`);
      }
    }
  });

  it('POST /who over the limit is a 413 0.5 Failure', async () => {
    const res = await world.app.inject({
      method: 'POST',
      url: '/who',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: 'x'.repeat(1_200_000) }),
    });
    expect(res.statusCode).toBe(413);
    expectRestAnswer(res, 'v05', 'POST /who 413');
  });

  it('bodies just under the limit with huge arrays are 400s in the dialect form', async () => {
    for (const v05 of [false, true]) {
      const res = await world.app.inject({
        method: 'POST',
        url: '/ask',
        headers: { 'content-type': 'application/json' },
        payload: big(9_000, v05),
      });
      expect(res.statusCode).toBe(400);
      expectRestAnswer(res, v05 ? 'v05' : 'nlweb', 'huge prev');
    }
  });

  it('deeply nested JSON bodies (10 000 levels) are 400s, not stack overflows', async () => {
    const nested = '['.repeat(10_000) + ']'.repeat(10_000);
    for (const payload of [
      nested,
      `{"query":${nested}}`,
      `{"query":{"text":"x","site":${nested}},"return_response":{}}`,
    ]) {
      const res = await world.app.inject({
        method: 'POST',
        url: '/ask',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
      expectRestAnswer(res, undefined, 'deep');
    }
  });
});

describe('floods of ids', () => {
  it('thousands of query_id and conversation_id values in one request', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('query_id', 'conversation_id', 'site', 'prev'),
        fc.constantFrom(10, 1_000, 5_000),
        fc.constantFrom('abc', '', 'x'.repeat(300), '%00', 'a.b', '*', '>'),
        async (key, n, value) => {
          const qs = Array.from({ length: n }, (_, i) => `${key}=${value}${i}`).join('&');
          const res = await world.app.inject({
            method: 'GET',
            url: `/ask?query=westerns&streaming=false&${qs}`,
          });
          expectRestAnswer(res, 'nlweb', `${n} × ${key}`);
        },
      ),
      { ...FC, numRuns: 20 },
    );
  });

  it('many concurrent asks sharing one query_id or request_id all get answers', async () => {
    const reqs = Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? world.app.inject({ method: 'GET', url: '/ask?query=westerns&streaming=false&query_id=samequery' })
        : world.app.inject({
            method: 'POST',
            url: '/ask',
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify({ ...V05_BASE, meta: { ...V05_BASE.meta, request_id: 'samerequest' } }),
          }),
    );
    const all = await Promise.all(reqs);
    for (const res of all) expectRestAnswer(res, undefined, 'shared id');
  });
});

describe('/who: arbitrary input', () => {
  it('GET with arbitrary query strings: < 500, 4xx in the 2025 form', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, async (qs) => {
        const res = await world.app.inject({ method: 'GET', url: `/who?${qs}` });
        expectRestAnswer(res, 'nlweb', `GET /who?${qs.slice(0, 200)}`);
      }),
      FC,
    );
  });

  it('POST with wrong types at every field: < 500, 4xx a 0.5 Failure', async () => {
    const base = { query: 'westerns', streaming: false, conversation_id: 'c', constr: { type: ['Movie'] } };
    await fc.assert(
      fc.asyncProperty(mutatedBody(base), async (body) => {
        const payload = JSON.stringify(body) ?? 'null';
        const res = await world.app.inject({
          method: 'POST',
          url: '/who',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        expectRestAnswer(res, 'v05', `POST /who ${payload.slice(0, 200)}`);
      }),
      FC,
    );
  });
});

describe('counterexamples found by the properties', () => {
  const deepArray = '['.repeat(10_000) + ']'.repeat(10_000);

  it('a query too deep to quote in the error message is a 400, not a stack overflow and a 500', async () => {
    // {"query": [[[…10 000 levels…]]]}: the 400's " (got …)" used JSON.stringify and overflowed.
    for (const [url, payload, form] of [
      ['/ask', `{"query":${deepArray}}`, 'nlweb'],
      ['/ask', `{"query":{"text":${deepArray}},"return_response":{}}`, 'v05'],
      ['/ask', `{"query":{"text":"x"},"context":{"prev":${deepArray}},"prefer":{}}`, 'nlweb'],
      ['/who', `{"query":${deepArray}}`, 'v05'],
    ] as const) {
      const res = await world.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
      expectRestAnswer(res, form, payload.slice(0, 40));
    }
  });

  it('a bare OPTIONS (no Origin, no Access-Control-Request-Method) is not a text/plain 400', async () => {
    const res = await world.app.inject({ method: 'OPTIONS', url: '/ask' });
    expect(res.statusCode).toBe(204);
    const preflight = await world.app.inject({
      method: 'OPTIONS',
      url: '/ask',
      headers: { origin: 'https://a.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
  });

  it('a failing router is the one way to a 5xx, and it is in the dialect form', async () => {
    const flat = await world.app.inject({ method: 'GET', url: '/ask?query=fail&streaming=false' });
    expect(flat.statusCode).toBe(500);
    expect(flat.json()).toMatchObject({ message_type: 'error', code: 'internal' });
    const v05 = await world.app.inject({
      method: 'POST',
      url: '/ask',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ ...V05_BASE, query: { text: 'fail' } }),
    });
    expect(v05.statusCode).toBe(500);
    expect(v05.json()).toMatchObject({ _meta: { error: { code: 'INTERNAL_ERROR' } } });
  });
});
