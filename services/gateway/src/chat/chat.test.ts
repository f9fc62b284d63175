import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { contracts, createMessageFactory } from '@askbus/contracts';
import type { AskRequest, ResultItem } from '@askbus/contracts';
import { buildGateway } from '../index';
import { fakeItem, serveFakeRetriever } from '../testing';
import { CHAT_CSP, CHAT_FILES } from './index';

// The chat page in real headless Chromium, against a real gateway on a real NATS with a fake
// router whose answers the query text picks (see `answer` below).

const CHROMIUM = '/usr/bin/chromium';
// The tracked screenshot is rewritten only on request (ASKBUS_UPDATE_SCREENSHOTS=1).
const SCREENSHOT =
  process.env.ASKBUS_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('./screenshot.png', import.meta.url))
    : join(tmpdir(), `askbus-screenshot-${process.pid}.png`);
/** A 1×1 PNG, so cards can show an image without any network. */
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
let retrieverBus: Bus;
let gatewayBus: Bus;
let app: FastifyInstance;
let base: string;
let browser: Browser;
let page: Page;
const calls: AskRequest[] = [];
const aborted: string[] = [];
const pageErrors: string[] = [];

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

const item = (n: number, extra: Partial<ResultItem> = {}): ResultItem => ({ ...fakeItem(n), ...extra });

function serveRouter(bus: Bus): void {
  bus.serveStream(contracts.ask, async function* (req, ctx) {
    calls.push(req);
    const msg = createMessageFactory(req.conversationId, req.queryId);
    yield msg({ message_type: 'begin-nlweb-response', query: req.query });
    if (req.query === 'slow') {
      yield msg({ message_type: 'result', content: [item(0)] });
      await sleep(30_000, ctx.signal);
      if (ctx.signal.aborted) aborted.push(ctx.queryId);
      return;
    }
    if (req.query === 'fail') {
      yield msg({ message_type: 'error', error: 'the fake router broke', code: 'internal', status: 500 });
      yield msg({ message_type: 'end-nlweb-response', error: true });
      return;
    }
    if (req.query === 'showcase') {
      yield msg({
        message_type: 'decontextualized_query',
        decontextualized_query: 'showcase of every renderer',
        original_query: 'showcase',
      });
      yield msg({ message_type: 'intermediate_message', content: 'Looking for showcase items' });
      yield msg({
        message_type: 'result',
        content: [
          item(1, {
            name: 'Pale Rider <img src=x onerror=alert(1)>',
            description: 'A preacher rides into a mining town.',
            schema_object: { '@type': 'Movie', name: 'Pale Rider', image: PNG },
          }),
          item(2, { url: 'javascript:alert(1)', name: 'Unsafe link' }),
        ],
      });
      yield msg({
        message_type: 'results_map',
        '@type': 'LocationMap',
        locations: [
          { title: "Joe's Pizza", address: '7 Carmine St, New York, NY' },
          { title: 'Di Fara', address: '1424 Avenue J, Brooklyn, NY' },
        ],
      });
      yield msg({
        message_type: 'item_details',
        name: 'Pale Rider',
        url: 'https://movies.example/pale-rider',
        score: 88,
        details: { director: 'Clint Eastwood', runtime: '115 min' },
        explanation: 'It is the western asked about.',
      });
      yield msg({
        message_type: 'compare_items',
        comparison: 'Pale Rider is darker; Unforgiven won Best Picture.',
        item1: {
          name: 'Pale Rider',
          url: 'https://movies.example/pale-rider',
          schema_object: {
            '@type': 'Movie',
            datePublished: '1985',
            director: { '@type': 'Person', name: 'Clint Eastwood' },
          },
        },
        item2: {
          name: 'Unforgiven',
          url: 'https://movies.example/unforgiven',
          schema_object: {
            '@type': 'Movie',
            datePublished: '1992',
            director: { '@type': 'Person', name: 'Clint Eastwood' },
          },
        },
      });
      yield msg({
        message_type: 'ensemble_result',
        '@type': 'EnsembleRecommendation',
        result: {
          success: true,
          ensemble_type: 'movie_night',
          recommendations: {
            theme: 'An Eastwood double bill',
            items: [
              {
                category: 'Opener',
                name: 'Pale Rider',
                url: 'https://movies.example/pale-rider',
                description: 'Moody.',
                why_recommended: 'Sets the tone.',
              },
              {
                category: 'Main',
                name: 'Unforgiven',
                url: 'https://movies.example/unforgiven',
                description: 'The classic.',
              },
            ],
            overall_tips: ['Start early.', 'Popcorn.'],
          },
          total_items_retrieved: 12,
        },
      });
      yield msg({ message_type: 'nlws', '@type': 'GeneratedAnswer', answer: 'Watch Pale Rider.', items: [] });
      yield msg({
        message_type: 'nlws',
        '@type': 'GeneratedAnswer',
        answer: 'Watch Pale Rider, then Unforgiven.',
        items: [item(1)],
      });
      yield msg({ message_type: 'end-nlweb-response' });
      return;
    }
    yield msg({ message_type: 'intermediate_message', content: `Searching for ${req.query}` });
    const site = req.site[0] === 'all' ? 'movies' : req.site[0]!;
    yield msg({ message_type: 'result', content: [fakeItem(0, site), fakeItem(1, site)] });
    if (req.mode === 'summarize') {
      yield msg({
        message_type: 'result',
        '@type': 'Summary',
        content: `A summary of ${req.query} on ${site}.`,
      });
    }
    if (req.mode === 'generate') {
      yield msg({
        message_type: 'nlws',
        '@type': 'GeneratedAnswer',
        answer: `Generated for ${req.query}.`,
        items: [fakeItem(0, site)],
      });
    }
    yield msg({ message_type: 'result', content: [fakeItem(2, site)] });
    yield msg({ message_type: 'end-nlweb-response' });
  });
}

beforeAll(async () => {
  nats = await testNats();
  [routerBus, retrieverBus, gatewayBus] = await Promise.all([
    testBus(nats.url, 'router'),
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'gateway'),
  ]);
  serveRouter(routerBus);
  serveFakeRetriever(retrieverBus);
  await Promise.all([routerBus.nc.flush(), retrieverBus.nc.flush()]);
  app = await buildGateway(gatewayBus, { keepAliveMs: 1_000, version: '9.9.9-test' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await Promise.all([routerBus?.drain(), retrieverBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

beforeEach(async () => {
  await page?.context().close();
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  // No request may leave 127.0.0.1: the page works offline.
  await context.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => {
    pageErrors.push(`external request: ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
});

async function ask(q: string): Promise<void> {
  await page.getByLabel('Your question').fill(q);
  await page.getByRole('button', { name: 'Ask' }).click();
}

const lastExchange = () => page.locator('.exchange').last();

describe('serving', () => {
  it('serves the page at / and its files under /chat/, with a strict CSP', async () => {
    const res = await fetch(`${base}/`);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(CHAT_CSP);
    const html = await res.text();
    expect(html).toContain('9.9.9-test');
    expect(html).not.toMatch(/https?:\/\/(?!127)/); // no external resources
    for (const f of CHAT_FILES) expect((await fetch(`${base}/chat/${f}`)).status).toBe(200);
    expect((await fetch(`${base}/chat/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${base}/chat/index.ts`)).status).toBe(404);
    const redirect = await fetch(`${base}/chat/`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([302, '/']);
    expect((await fetch(`${base}/chat/..%2Findex.ts`)).status).toBe(404);
  });
});

describe('the chat page', () => {
  it('fills the site selector from /sites and streams cards in', async () => {
    await expect
      .poll(() => page.locator('#site option').allTextContents())
      .toEqual(['All sites', 'movies (3 items)', 'cars (2 items)']);
    await ask('space movies');
    await expect.poll(() => lastExchange().locator('.card').count()).toBe(3);
    await expect.poll(() => lastExchange().locator('.state').textContent()).toBe('Done: 3 results.');
    const first = lastExchange().locator('.card').first();
    await expect.poll(() => first.locator('.card-title a').textContent()).toBe('Item 0');
    expect(await first.locator('.card-title a').getAttribute('href')).toBe('https://movies.example/item/0');
    expect(await first.locator('.score').textContent()).toBe('score 90');
    expect(await first.locator('.description').textContent()).toBe('the description of item 0');
    expect(await lastExchange().locator('.progress').textContent()).toContain('Searching for space movies');
    expect(calls.at(-1)).toMatchObject({ query: 'space movies', site: ['all'], mode: 'list', prev: [] });
    expect(pageErrors).toEqual([]);
  });

  it('asks the chosen site in summarize mode and shows the summary; follow-ups carry prev and the conversation', async () => {
    await page.getByLabel('Site').selectOption('cars');
    await page.getByLabel('Mode').selectOption('summarize');
    await ask('fast cars');
    await expect
      .poll(() => lastExchange().locator('.summary p').textContent())
      .toBe('A summary of fast cars on cars.');
    await expect.poll(() => lastExchange().locator('.card').count()).toBe(3);
    expect(await lastExchange().locator('.card .site').first().textContent()).toBe('cars');
    const first = calls.at(-1)!;
    expect(first).toMatchObject({ query: 'fast cars', site: ['cars'], mode: 'summarize', prev: [] });
    expect(first.conversationId).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(page.url()).toContain('site=cars');

    await page.getByLabel('Mode').selectOption('generate');
    await ask('which is cheapest');
    await expect
      .poll(() => lastExchange().locator('.generated p').first().textContent())
      .toBe('Generated for which is cheapest.');
    expect(await lastExchange().locator('.generated .cited a').textContent()).toBe('Item 0');
    expect(calls.at(-1)).toMatchObject({
      query: 'which is cheapest',
      mode: 'generate',
      prev: ['fast cars'],
      conversationId: first.conversationId,
    });

    await page.getByRole('button', { name: 'New conversation' }).click();
    expect(await page.locator('.exchange').count()).toBe(0);
    await ask('again');
    await expect.poll(() => calls.at(-1)?.query).toBe('again');
    expect(calls.at(-1)!.prev).toEqual([]);
    expect(calls.at(-1)!.conversationId).not.toBe(first.conversationId);
    expect(pageErrors).toEqual([]);
  });

  it('renders every kind of message, escaping all text, and takes a screenshot', async () => {
    await ask('showcase');
    const ex = lastExchange();
    await expect.poll(() => ex.locator('.state').textContent()).toBe('Done: 2 results.');
    // Text stays text: no element made from data, no javascript: link.
    expect(await ex.locator('.results .card-title a').first().textContent()).toBe(
      'Pale Rider <img src=x onerror=alert(1)>',
    );
    expect(await ex.locator('.results .card img').count()).toBe(1);
    expect(await ex.locator('.results .card img').getAttribute('src')).toMatch(/^data:image\/png/);
    expect(await ex.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await ex.locator('.results .card').nth(1).locator('.card-title').textContent()).toContain(
      'Unsafe link',
    );
    expect(await ex.locator('.interpreted').textContent()).toBe(
      'Query interpreted as: showcase of every renderer',
    );
    expect(await ex.locator('.locations li').allTextContents()).toEqual([
      "Joe's Pizza — 7 Carmine St, New York, NY",
      'Di Fara — 1424 Avenue J, Brooklyn, NY',
    ]);
    expect(await ex.locator('.details dd').allTextContents()).toEqual(['Clint Eastwood', '115 min']);
    expect(await ex.locator('.compare-table thead th').allTextContents()).toEqual([
      'Property',
      'Pale Rider',
      'Unforgiven',
    ]);
    expect(await ex.locator('.compare-table tbody tr').allTextContents()).toEqual([
      'datePublished19851992',
      'directorClint EastwoodClint Eastwood',
    ]);
    expect(await ex.locator('.ensemble > h3').textContent()).toBe('An Eastwood double bill');
    expect(await ex.locator('.ensemble .card').count()).toBe(2);
    expect(await ex.locator('.ensemble .tips li').allTextContents()).toEqual(['Start early.', 'Popcorn.']);
    // The generated answer came twice; only the second stays.
    expect(await ex.locator('.generated').count()).toBe(1);
    expect(await ex.locator('.generated p').first().textContent()).toBe('Watch Pale Rider, then Unforgiven.');
    // Tall enough for the whole answer, so the sticky question bar sits at the bottom.
    await page.setViewportSize({ width: 1000, height: 1900 });
    await page.screenshot({ path: SCREENSHOT });
    expect(pageErrors).toEqual([]);
  });

  it('Stop aborts the query: the page says so and the router sees its signal aborted', async () => {
    const before = calls.length;
    const stop = page.getByRole('button', { name: 'Stop' });
    expect(await stop.isDisabled()).toBe(true);
    await ask('slow');
    await expect.poll(() => lastExchange().locator('.card').count()).toBe(1);
    expect(await lastExchange().getAttribute('aria-busy')).toBe('true');
    await expect.poll(() => calls.length).toBe(before + 1);
    const { queryId } = calls.at(-1)!;
    await stop.click();
    await expect.poll(() => lastExchange().locator('.state').textContent()).toBe('Stopped after 1 result.');
    await expect.poll(() => aborted, { timeout: 5_000 }).toContain(queryId);
    expect(await stop.isDisabled()).toBe(true);
    expect(await lastExchange().getAttribute('aria-busy')).toBe('false');
  });

  it('shows error messages, HTTP errors and a dropped stream as errors', async () => {
    await ask('fail');
    await expect
      .poll(() => lastExchange().locator('[role=alert]').textContent())
      .toBe('The answer failed: the fake router broke (internal)');

    // An HTTP 400: a site name the gateway refuses.
    await page.evaluate(
      "(() => { const s = document.querySelector('#site'); s.append(new Option('bad site!', 'bad site!')); s.value = 'bad site!'; })()",
    );
    await ask('anything');
    await expect
      .poll(() => lastExchange().locator('[role=alert]').textContent())
      .toMatch(/^The gateway answered HTTP 400: site: a site name is letters/);

    // A stream that ends without end-nlweb-response.
    await page.route('**/ask?*', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/event-stream',
        body: `data: {"message_type":"begin-nlweb-response","query":"cut"}\n\ndata: ${JSON.stringify({ message_type: 'result', content: [fakeItem(5)] })}\n\n`,
      }),
    );
    await page.getByLabel('Site').selectOption('movies');
    await ask('cut');
    await expect
      .poll(() => lastExchange().locator('[role=alert]').textContent())
      .toBe('The answer was cut off: the connection closed before the answer was complete.');
    expect(await lastExchange().locator('.card').count()).toBe(1);

    // The gateway unreachable.
    await page.unroute('**/ask?*');
    await page.route('**/ask?*', (route) => route.abort('connectionrefused'));
    await ask('offline');
    await expect
      .poll(() => lastExchange().locator('[role=alert]').textContent())
      .toMatch(/^The connection to the gateway was lost:/);
  });
});
