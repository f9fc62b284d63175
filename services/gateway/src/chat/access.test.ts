import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from '../index';
import { serveFakeRetriever, serveFakeRouter } from '../testing';
import type { FakeRouter } from '../testing';

// The chat page in real headless Chromium against a gateway that requires API keys: the page
// asks for a key on the first 401, keeps it in sessionStorage, sends it, and then works.
// No screenshots here: the tracked PNGs belong to chat.test.ts.

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'chat-page-key-123456';

let nats: Awaited<ReturnType<typeof testNats>>;
let buses: Bus[] = [];
let router: FakeRouter;
let app: FastifyInstance;
let base: string;
let browser: Browser;

beforeAll(async () => {
  nats = await testNats();
  buses = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
  const [routerBus, gatewayBus] = buses as [Bus, Bus];
  router = serveFakeRouter(routerBus);
  serveFakeRetriever(routerBus);
  await routerBus.nc.flush();
  app = await buildGateway(gatewayBus, { auth: { keys: [{ client: 'browser', key: KEY }] } });
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
  await Promise.all(buses.map((b) => b.drain()));
  await nats?.stop();
});

/** A page of a fresh browser context (its own sessionStorage), recording API calls and errors. */
async function openPage(context: BrowserContext): Promise<{
  page: Page;
  errors: string[];
  calls: { url: string; authorization: string | undefined; status?: number }[];
}> {
  const page = await context.newPage();
  const errors: string[] = [];
  const calls: { url: string; authorization: string | undefined; status?: number }[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (m) => {
    // Chromium logs every 4xx response; the 401s are this test's subject.
    if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(m.text());
  });
  page.on('response', (res) => {
    const url = new URL(res.url());
    if (url.pathname === '/ask' || url.pathname === '/sites') {
      calls.push({
        url: url.pathname,
        authorization: res.request().headers().authorization,
        status: res.status(),
      });
    }
  });
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  return { page, errors, calls };
}

async function ask(page: Page, q: string): Promise<void> {
  await page.getByLabel('Your question').fill(q);
  await page.getByRole('button', { name: 'Ask' }).click();
}

describe('the chat page on a gateway with API keys', () => {
  it('asks for a key on 401, says when a key is refused, then loads the sites and answers with it', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    try {
      const { page, errors, calls } = await openPage(context);
      const keyForm = page.locator('#key-form');
      // The sites call was refused: the key field shows, the site list stays empty.
      await expect.poll(() => keyForm.isVisible()).toBe(true);
      expect(await page.locator('#key-title').textContent()).toBe('This gateway needs an API key.');
      expect(await page.locator('#site option').allTextContents()).toEqual(['All sites']);
      expect(calls).toEqual([{ url: '/sites', authorization: undefined, status: 401 }]);

      // A question before any key: refused, and out of the conversation.
      const before = router.calls.length;
      await ask(page, 'space movies');
      const last = page.locator('.exchange').last();
      await expect
        .poll(() => last.locator('[role=alert]').textContent())
        .toMatch(/^The gateway needs an API key:/);
      expect(await last.locator('.state').textContent()).toBe('Waiting for an API key.');
      expect(router.calls.length).toBe(before);

      // A wrong key: both calls are refused again, and the page says so.
      await page.getByRole('textbox', { name: 'API key' }).fill('not-the-right-key');
      await page.getByRole('button', { name: 'Use this key' }).click();
      await expect
        .poll(() => page.locator('#key-title').textContent())
        .toBe('The gateway refused this API key; enter another one.');
      expect(await keyForm.isVisible()).toBe(true);
      expect(
        calls.filter((c) => c.authorization === 'Bearer not-the-right-key').map((c) => c.status),
      ).toEqual([401, 401]);

      // The right key: the sites load, the refused question is asked again and answered.
      await page.getByRole('textbox', { name: 'API key' }).fill(KEY);
      await page.getByRole('button', { name: 'Use this key' }).click();
      await expect
        .poll(() => page.locator('#site option').allTextContents())
        .toEqual(['All sites', 'movies (3 items)', 'cars (2 items)']);
      await expect
        .poll(() => page.locator('.exchange').last().locator('.state').textContent())
        .toBe('Done: 3 results.');
      expect(await page.locator('.exchange').count()).toBe(1);
      expect(await keyForm.isVisible()).toBe(false);
      const asked = router.calls.slice(before).map((c) => c.req);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ query: 'space movies', prev: [] });
      expect(calls.filter((c) => c.status === 200).map((c) => c.authorization)).toEqual([
        `Bearer ${KEY}`,
        `Bearer ${KEY}`,
      ]);
      // The key lives in this tab's sessionStorage, not in the address.
      expect(await page.evaluate("sessionStorage.getItem('askbus.apiKey')")).toBe(KEY);
      expect(page.url()).not.toContain(KEY);

      // A follow-up carries the key and the conversation.
      await page.getByLabel('Mode').selectOption('summarize');
      await ask(page, 'and cars?');
      await expect
        .poll(() => page.locator('.exchange').last().locator('.state').textContent())
        .toBe('Done: 3 results.');
      expect(router.calls.at(-1)?.req).toMatchObject({ query: 'and cars?', prev: ['space movies'] });

      // A reload in the same tab keeps the key: no field, the sites load.
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      expect(await page.locator('#site option').count()).toBe(3);
      expect(await keyForm.isVisible()).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a new browser session asks for the key again', async () => {
    const context = await browser.newContext();
    try {
      const { page } = await openPage(context);
      await expect.poll(() => page.locator('#key-form').isVisible()).toBe(true);
      expect(await page.evaluate("sessionStorage.getItem('askbus.apiKey')")).toBeNull();
    } finally {
      await context.close();
    }
  });
});
