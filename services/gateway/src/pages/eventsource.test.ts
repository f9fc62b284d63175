import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPageWorld, type PageWorld } from './page-world';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { augAskUrl, mayAskUrl, novMessage } from './fake-pages';
import type { PageRouter } from './page-router';

// NLWeb's pages read answers with the browser's EventSource, which reconnects — and so asks the
// same question again, every ~3 s — when a stream ends before the page closes it. In headless
// Chromium, small pages of our own use EventSource the way each NLWeb page does:
// - May 2025 streaming.js (ManagedEventSource): closes on `complete`; its onerror retries only
//   when the browser gave up (readyState CLOSED), else the browser reconnects by itself.
// - Aug 2025 fp-chat-interface.js: closes on `complete`; onerror closes too.
// - Nov 2025 chat-interface-unified.js with ?mode=sse: on /chat/sse; onerror closes at once.
// A page that closed its EventSource (readyState CLOSED) is never reconnected by the browser.

const CHROMIUM = '/usr/bin/chromium';

let world: PageWorld;
let router: PageRouter;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  world = await startPageWorld();
  ({ router, base } = world);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage();
  await page.goto(`${base}/health`); // the gateway's origin, as a proxy in front of it gives
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

interface Seen {
  /** message_type (or envelope type) of each event, in order. */
  types: string[];
  /** readyState when onerror fired (0: the browser is about to reconnect). */
  errors: number[];
  /** readyState once the page is done. */
  finalState: number;
}

/**
 * An EventSource used the May/Aug way: read events, close on `complete`; resolve once closed,
 * or at the first onerror (recording whether the browser would reconnect).
 */
function legacyPage(url: string): Promise<Seen> {
  return page.evaluate(
    (u) =>
      new Promise<Seen>((resolve) => {
        const seen: Seen = { types: [], errors: [], finalState: -1 };
        const es = new EventSource(u);
        es.onmessage = (event: { data: string }) => {
          const data = JSON.parse(event.data) as { message_type?: string };
          seen.types.push(data.message_type ?? '?');
          if (data.message_type === 'complete') {
            es.close();
            seen.finalState = es.readyState;
            resolve(seen);
          }
        };
        es.onerror = () => {
          seen.errors.push(es.readyState);
          es.close(); // the test stops here; the May page would let the browser reconnect
          seen.finalState = es.readyState;
          resolve(seen);
        };
      }),
    url,
  );
}

/** An EventSource used the Nov way on /chat/sse: onerror closes it at once. */
function novSsePage(url: string): Promise<Seen> {
  return page.evaluate(
    (u) =>
      new Promise<Seen>((resolve) => {
        const seen: Seen = { types: [], errors: [], finalState: -1 };
        const es = new EventSource(u);
        es.onmessage = (event: { data: string }) => {
          const data = JSON.parse(event.data) as { message_type?: string; type?: string };
          seen.types.push(data.message_type ?? data.type ?? '?');
        };
        es.onerror = () => {
          seen.errors.push(es.readyState);
          es.close();
          seen.finalState = es.readyState;
          resolve(seen);
        };
      }),
    url,
  );
}

const callsFor = (query: string): number => router.calls.filter((c) => c.query === query).length;

describe('EventSource in Chromium: each NLWeb page ends its stream without a reconnect', () => {
  it('May 2025: complete arrives last, the page closes, the question was asked once', async () => {
    const seen = await legacyPage(mayAskUrl(base, 'may westerns', { site: 'movies', mode: 'summarize' }));
    expect(seen.types).toEqual([
      'intermediate_message',
      'result_batch',
      'result_batch',
      'summary',
      'complete',
    ]);
    expect(seen.errors).toEqual([]);
    expect(seen.finalState).toBe(2); // EventSource.CLOSED: never reconnected
    expect(callsFor('may westerns')).toBe(1);
  });

  it('the same page on a stream without complete would reconnect (what askbus did before)', async () => {
    // api_version other than 0.1 answers in the Sept 2025 message schema, which ends without
    // `complete`: the server closes the stream and the browser is about to ask again.
    const seen = await legacyPage(`${mayAskUrl(base, 'may control', { site: 'movies' })}&api_version=0.2`);
    expect(seen.types.at(-1)).toBe('end-nlweb-response');
    expect(seen.errors).toEqual([0]); // EventSource.CONNECTING: a reconnect is pending
  });

  it('Aug 2025: complete, closed, asked once', async () => {
    const seen = await legacyPage(augAskUrl(base, 'aug westerns', { site: 'movies', mode: 'generate' }));
    expect(seen.types).toEqual(['intermediate_message', 'nlws', 'complete']);
    expect(seen.errors).toEqual([]);
    expect(seen.finalState).toBe(2);
    expect(callsFor('aug westerns')).toBe(1);
  });

  it('Nov 2025 ?mode=sse: the answer ends with end-nlweb-response, the stream ends, the page closes it', async () => {
    const message = novMessage('1733000000999', 'nov westerns', { site: 'movies' });
    const seen = await novSsePage(
      `${base}/chat/sse?${new URLSearchParams({ message: JSON.stringify(message) })}`,
    );
    expect(seen.types).toEqual([
      'message_ack',
      'begin-nlweb-response',
      'result',
      'result',
      'end-nlweb-response',
    ]);
    expect(seen.errors).toEqual([0]);
    expect(seen.finalState).toBe(2);
    expect(callsFor('nov westerns')).toBe(1);
  });
});
