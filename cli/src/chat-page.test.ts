import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { startDemoSystem, type DemoSystem } from './testing';
import type { Running } from './up';

// The gateway's chat page in real headless Chromium, against the whole system with the demo sites.

// The tracked screenshot is rewritten only on request (ASKBUS_UPDATE_SCREENSHOTS=1), so a test run
// leaves the working tree clean.
const SCREENSHOT =
  process.env.ASKBUS_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../services/gateway/src/chat/screenshot-demo.png', import.meta.url))
    : join(tmpdir(), `askbus-screenshot-demo-${process.pid}.png`);

let system: DemoSystem;
let running: Running;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  [system, browser] = await Promise.all([
    startDemoSystem(),
    chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    }),
  ]);
  running = system.running;
  const context = await browser.newContext({
    viewport: { width: 1000, height: 1100 },
    reducedMotion: 'reduce',
  });
  await context.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => {
    problems.push(`external request: ${route.request().url()}`);
    return route.abort();
  });
  page = await context.newPage();
  page.on('pageerror', (err) => problems.push(String(err)));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

const last = () => page.locator('.exchange').last();

describe('the chat page on askbus up', { timeout: 60_000 }, () => {
  it('asks the movies site and streams in cards of Eastwood westerns', async () => {
    await page.goto(running.url);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#site option').allTextContents()).toEqual(
      expect.arrayContaining(['All sites', 'movies (3200 items)']),
    );
    await page.getByLabel('Site').selectOption('movies');
    await page.getByLabel('Your question').fill('westerns with clint eastwood');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect
      .poll(() => last().locator('.state').textContent(), { timeout: 20_000 })
      .toMatch(/^Done: \d+ results?\.$/);
    const names = await last().locator('.results .card-title a').allTextContents();
    expect(names.slice(0, 5)).toEqual(expect.arrayContaining(['Pale Rider', 'High Plains Drifter']));
    const first = last().locator('.results .card').first();
    expect(await first.locator('.score').textContent()).toMatch(/^score \d+$/);
    expect(await first.locator('.description').textContent()).toMatch(/eastwood/i);
    expect(await first.locator('.card-title a').getAttribute('href')).toMatch(/^https:\/\//);
    expect(problems).toEqual([]);
  });

  it('a follow-up in summarize mode shows a summary above its cards', async () => {
    await page.getByLabel('Mode').selectOption('summarize');
    await page.getByLabel('Your question').fill('only the ones from the 1970s');
    await page.getByRole('button', { name: 'Ask' }).click();
    await expect.poll(() => last().locator('.state').textContent(), { timeout: 20_000 }).toMatch(/^Done/);
    expect(await last().locator('.summary p').textContent()).toMatch(
      /^The only Western movie .*is High Plains Drifter \[1\]/,
    );
    expect(await page.locator('#conversation-info').textContent()).toMatch(
      /^This conversation has 2 questions;/,
    );
    await page.evaluate("document.querySelector('.exchange:last-of-type').scrollIntoView()");
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(problems).toEqual([]);
  });
});
