import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NovSocket,
  augAsk,
  mayAsk,
  novMessage,
  novSseAsk,
  pageSites,
  type PageView,
} from '@askbus/gateway/pages-testing';
import { startDemoSystem, type DemoSystem } from './testing';

// NLWeb's own pages against the whole system (`askbus up` with the demo sites): the fake
// clients of services/gateway/src/pages/fake-pages.ts send what May 2025 streaming.js, Aug 2025
// fp-chat-interface.js and the Nov 2025 chat page send, and keep what each would show (the
// expectations, from each page's code, are written there and in the gateway's page tests).

let system: DemoSystem;
let base: string;

beforeAll(async () => {
  system = await startDemoSystem();
  base = system.running.url;
}, 120_000);

afterAll(async () => {
  await system?.stop();
});

const WESTERNS = 'westerns with clint eastwood';
const CARS = 'fuel efficient japanese cars';

type Ask = (query: string, site: string, mode?: 'list' | 'summarize' | 'generate') => Promise<PageView>;

const pages: [string, Ask][] = [
  ['May 2025 (streaming.js)', (q, site, mode) => mayAsk(base, q, { site, mode: mode ?? 'list' })],
  ['Aug 2025 (fp-chat-interface.js)', (q, site, mode) => augAsk(base, q, { site, mode: mode ?? 'list' })],
  [
    'Nov 2025 over /chat/ws',
    async (q, site, mode) => {
      const s = await NovSocket.open(base);
      try {
        return await s.ask(novMessage(String(Date.now()), q, { site, mode: mode ?? 'list' }));
      } finally {
        s.close();
      }
    },
  ],
  [
    'Nov 2025 over /chat/sse',
    (q, site, mode) => novSseAsk(base, novMessage(String(Date.now()), q, { site, mode: mode ?? 'list' })),
  ],
];

const once = (v: PageView): void => expect(new Set(v.keys).size, v.keys.join(', ')).toBe(v.keys.length);

describe.each(pages)('%s on askbus up', { timeout: 60_000 }, (_name, ask) => {
  it('a list query on movies shows Eastwood westerns', async () => {
    const v = await ask(WESTERNS, 'movies');
    expect(v.completed).toBe(true);
    expect(v.items).toContain('Pale Rider');
    once(v);
  });

  it('a list query on cars shows Japanese cars', async () => {
    const v = await ask(CARS, 'cars');
    expect(v.items.length).toBeGreaterThan(2);
    expect(v.items.some((n) => /Honda|Toyota|Datsun|Mazda/.test(n))).toBe(true);
    once(v);
  });

  it('summarize shows a summary with the results', async () => {
    const v = await ask(WESTERNS, 'movies', 'summarize');
    expect(v.texts.join(' ')).toMatch(/Pale Rider|High Plains Drifter/);
    expect(v.items.length).toBeGreaterThan(0);
    once(v);
  });

  it('generate shows an answer and the items it cites, once', async () => {
    const v = await ask(CARS, 'cars', 'generate');
    expect(v.texts.join(' ')).toMatch(/\[1\]/);
    expect(v.items.length).toBeGreaterThan(0);
    once(v);
  });

  it('details: the item and its details', async () => {
    const v = await ask('tell me about Pale Rider', 'movies');
    expect([...v.items, ...v.texts].join(' ')).toMatch(/Pale Rider/);
    expect([...v.texts, ...v.events.map((e) => String(e.details ?? ''))].join(' ')).toMatch(/Clint Eastwood/);
  });

  it('the clarifying question appears', async () => {
    const v = await ask('recommend something good', 'movies');
    expect(v.texts.join(' ')).toMatch(/What kind of movie/);
    expect(v.completed).toBe(true);
  });
});

describe('the site list (Aug and Nov pages)', () => {
  it('lists the demo sites, all first', async () => {
    expect(await pageSites(base)).toEqual(['all', 'cars', 'movies']);
  });
});
