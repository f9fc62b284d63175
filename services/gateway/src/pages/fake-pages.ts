/**
 * Fake clients of NLWeb's own chat pages, for tests. Each is written from reading the page's
 * code (nothing of it is copied): it sends exactly what the page sends, and keeps what the page
 * would show by the page's own rules — including its quirks, so that a test sees an item shown
 * twice or a text wiped where the real page would. The pages:
 *
 * - May 2025, microsoft/NLWeb 0fc7ce6 `static/index.html` + `static/streaming.js`
 *   (ChatInterface, ManagedEventSource): `GET /ask` as an EventSource.
 * - Aug 2025, nlweb-ai/NLWeb 8612638 `static/index.html` + `static/fp-chat-interface.js`
 *   (ModernChatInterface): `GET /ask` as an EventSource, sites from `GET /sites`.
 * - Nov 2025, NLWeb main (xrettle/NLWeb 0646d07) `static/index.html` +
 *   `static/chat-interface-unified.js` + `static/chat-ui-common.js`: the chat API, `/chat/ws`
 *   (default) or `/chat/sse?message=` (`?mode=sse`).
 */
import WebSocket from 'ws';

type Data = Record<string, unknown>;

/** What a page shows for one answer once its stream is over. */
export interface PageView {
  /** Names of the items listed, in the page's order (an item shown twice appears twice). */
  items: string[];
  /** The same items by URL (names may repeat: two cars of one model). */
  keys: string[];
  /** Text the page shows for the answer: summary, answer, question, details, notes. */
  texts: string[];
  /** The page saw the event it ends on (`complete`, `end-nlweb-response`) and stopped listening. */
  completed: boolean;
  /** The page showed an error for the answer (Aug: "Sorry, an error occurred…"; Nov: showError). */
  error?: string;
  /** Every event the page received, parsed. */
  events: Data[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const nameOf = (item: unknown): string =>
  item && typeof item === 'object' ? str((item as Data).name) || str((item as Data).title) : String(item);
const keyOf = (item: unknown): string =>
  item && typeof item === 'object' ? str((item as Data).url) || nameOf(item) : String(item);
const scoreOf = (item: unknown): number =>
  item && typeof item === 'object' && typeof (item as Data).score === 'number'
    ? ((item as Data).score as number)
    : 0;

/** The text a browser shows for HTML set with innerHTML (tags dropped, entities decoded). */
export function shownText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

/** The `data:` events of an SSE body (comments dropped), parsed. */
export function sseEvents(body: string): Data[] {
  return body
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n'),
    )
    .filter((d) => d !== '')
    .map((d) => JSON.parse(d) as Data);
}

/** Reads an SSE response to its end, as an EventSource receives it. */
async function eventSourceGet(url: string): Promise<Data[]> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream' } });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  return sseEvents(await res.text());
}

// ---------------------------------------------------------------------------------------------
// May 2025: static/streaming.js

export interface AskOptions {
  site?: string;
  mode?: 'list' | 'summarize' | 'generate';
  prev?: string[];
}

/**
 * The URL `ChatInterface.getResponse` builds: query_id (`query_<ms>_<0-999>`), query, site
 * (only when one is selected), generate_mode, prev (JSON of the earlier questions),
 * item_to_remember and context_url (both empty here, but always sent).
 */
export function mayAskUrl(base: string, query: string, o: AskOptions = {}): string {
  const p = new URLSearchParams();
  p.append('query_id', `query_${Date.now()}_${Math.floor(Math.random() * 1000)}`);
  p.append('query', query);
  if (o.site) p.append('site', o.site);
  p.append('generate_mode', o.mode ?? 'list');
  p.append('prev', JSON.stringify(o.prev ?? []));
  p.append('item_to_remember', '');
  p.append('context_url', '');
  return `${base}/ask?${p.toString()}`;
}

interface MayNode {
  kind: 'text' | 'item';
  text: string;
  key: string;
  score: number;
}

/**
 * What `ManagedEventSource.onmessage` does with each event: it reads only `message_type`s it
 * knows — `result_batch` (`results`), `summary`, `intermediate_message`, `ask_user`,
 * `item_details`, `site_is_irrelevant_to_query`, `asking_sites`, `remember` (all `message`),
 * `nlws` (`answer`, `items`: clears the bubble, but keeps the items it holds) and `complete`,
 * on which it re-sorts and closes the EventSource. Without `complete` the browser reconnects
 * and asks again. `resortResults` (after each batch, a summary and at the end) rebuilds the
 * bubble from the remembered text (item details or the nlws answer), the summary and the items
 * it holds, so other texts vanish once there are items.
 */
export function mayView(events: Data[]): PageView {
  let bubble: MayNode[] = [];
  const current: MayNode[] = [];
  let remembered: MayNode | undefined;
  let summary: MayNode | undefined;
  let completed = false;
  const text = (t: string): MayNode => ({ kind: 'text', text: t, key: '', score: 0 });
  const itemNode = (item: unknown): MayNode => ({
    kind: 'item',
    text: nameOf(item),
    key: keyOf(item),
    score: scoreOf(item),
  });
  const resort = (): void => {
    if (current.length === 0) return;
    current.sort((a, b) => b.score - a.score);
    bubble = [...(remembered ? [remembered] : []), ...(summary ? [summary] : []), ...current];
  };
  for (const d of events) {
    if (completed) break; // closed: nothing more is read
    switch (d.message_type) {
      case 'result_batch':
        for (const item of (d.results as unknown[]) ?? []) {
          const node = itemNode(item);
          current.push(node);
          bubble.push(node);
        }
        resort();
        break;
      case 'intermediate_message':
      case 'asking_sites':
      case 'ask_user':
      case 'site_is_irrelevant_to_query':
        bubble.push(text(str(d.message)));
        break;
      case 'summary':
        summary = text(str(d.message));
        resort();
        break;
      case 'item_details':
      case 'remember':
        if (str(d.message)) {
          remembered = text(str(d.message));
          bubble.push(remembered);
        }
        break;
      case 'nlws': {
        bubble = [];
        if (str(d.answer)) {
          remembered = text(str(d.answer));
          bubble.push(remembered);
        }
        for (const item of (d.items as unknown[]) ?? []) {
          const node = itemNode(item);
          current.push(node);
          bubble.push(node);
        }
        break;
      }
      case 'complete':
        resort();
        completed = true;
        break;
      default:
        break;
    }
  }
  return {
    items: bubble.filter((n) => n.kind === 'item').map((n) => n.text),
    keys: bubble.filter((n) => n.kind === 'item').map((n) => n.key),
    texts: bubble.filter((n) => n.kind === 'text').map((n) => n.text),
    completed,
    events,
  };
}

export async function mayAsk(base: string, query: string, o: AskOptions = {}): Promise<PageView> {
  return mayView(await eventSourceGet(mayAskUrl(base, query, o)));
}

// ---------------------------------------------------------------------------------------------
// Aug 2025: static/fp-chat-interface.js

/**
 * The URL `ModernChatInterface.getStreamingResponse` builds: query, generate_mode,
 * display_mode=full, site; prev (JSON) only when there are earlier questions; thread_id when
 * a conversation id was set (a new chat sets one).
 */
export function augAskUrl(base: string, query: string, o: AskOptions & { threadId?: string } = {}): string {
  const p = new URLSearchParams({
    query,
    generate_mode: o.mode ?? 'list',
    display_mode: 'full',
    site: o.site ?? 'all',
  });
  if (o.prev && o.prev.length > 0) p.append('prev', JSON.stringify(o.prev));
  if (o.threadId) p.append('thread_id', o.threadId);
  return `${base}/ask?${p.toString()}`;
}

/**
 * What its `onmessage` does: `summary` (`message`) and `ask_user` (`message`) are appended to
 * the answer text, which is set with innerHTML; `result_batch` (`results`) and `item_details`
 * (`details` becomes the description) add items; `nlws` replaces the text with `answer` and the
 * items with `items`; an `intermediate_message` shows until the next event; `complete` ends the
 * stream and closes the EventSource. A stream that ends without it fires `onerror`, which also
 * ends (no reconnect) — with "Sorry, an error occurred…" when nothing came. Items are listed by
 * score, highest first.
 */
export function augView(events: Data[], ended: 'complete' | 'closed' = 'complete'): PageView {
  let content = '';
  let results: unknown[] = [];
  let temp: string | undefined;
  let completed = false;
  for (const d of events) {
    if (completed) break;
    temp = undefined;
    switch (d.message_type) {
      case 'summary':
        if (str(d.message)) content += `${str(d.message)}\n\n`;
        break;
      case 'result_batch':
        if (Array.isArray(d.results)) results = results.concat(d.results);
        break;
      case 'intermediate_message':
        temp = str(d.message);
        break;
      case 'ask_user':
        if (str(d.message)) content += `${str(d.message)}\n`;
        break;
      case 'asking_sites':
        if (str(d.message)) content += `Searching: ${str(d.message)}\n\n`;
        break;
      case 'decontextualized_query':
        if (d.decontextualized_query && d.decontextualized_query !== d.original_query)
          content = `<div>Query interpreted as: "${str(d.decontextualized_query)}"</div>${content}`;
        break;
      case 'item_details':
        results.push({ ...d, description: d.details });
        break;
      case 'ensemble_result': {
        const r = (d.result as Data | undefined)?.recommendations as Data | undefined;
        if (r) content += `${str(r.theme)}\n`;
        if (r && Array.isArray(r.items)) results = results.concat(r.items);
        break;
      }
      case 'nlws':
        if (typeof d.answer === 'string') content = `${d.answer}\n\n`;
        if (Array.isArray(d.items)) results = d.items;
        break;
      case 'complete':
        completed = true;
        break;
      default:
        break;
    }
  }
  const sorted = [...results].sort((a, b) => scoreOf(b) - scoreOf(a));
  const texts = shownText(content)
    .split(/\n{2,}|\n/)
    .map((t) => t.trim())
    .filter(Boolean);
  return {
    items: sorted.map(nameOf),
    keys: sorted.map(keyOf),
    texts: temp ? [...texts, temp] : texts,
    completed,
    ...(events.length === 0 && ended === 'closed'
      ? { error: 'Sorry, an error occurred while processing your request.' }
      : {}),
    events,
  };
}

export async function augAsk(
  base: string,
  query: string,
  o: AskOptions & { threadId?: string } = {},
): Promise<PageView> {
  return augView(await eventSourceGet(augAskUrl(base, query, o)));
}

/** `loadSites`: `GET /sites?streaming=false`, `{"message-type": "sites", "sites": [...]}`, 'all' first. */
export async function pageSites(base: string): Promise<string[]> {
  const res = await fetch(`${base}/sites?streaming=false`);
  const data = (await res.json()) as Data;
  if (data['message-type'] !== 'sites' || !Array.isArray(data.sites)) throw new Error('no site list');
  const sites = (data.sites as string[]).filter((s) => s !== 'all');
  sites.sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  return ['all', ...sites];
}

// ---------------------------------------------------------------------------------------------
// Nov 2025: static/chat-interface-unified.js + static/chat-ui-common.js

/** The message `createUserMessage` builds (plus the page's URL parameters in `content`). */
export function novMessage(
  conversationId: string,
  query: string,
  o: AskOptions & { userId?: string; prevQueries?: string[]; extra?: Data } = {},
): Data {
  const userId = o.userId ?? 'anon_test';
  return {
    message_id: `msg_${Date.now()}_${Math.random().toString(36).slice(2, 11)}`,
    conversation_id: conversationId,
    type: 'message',
    message_type: 'user',
    content: {
      query,
      site: o.site ?? 'all',
      mode: o.mode ?? 'list',
      prev_queries: (o.prevQueries ?? []).map((q) => ({
        query: q,
        user_id: userId,
        timestamp: new Date().toISOString(),
      })),
      ...(o.extra ?? {}),
    },
    timestamp: new Date().toISOString(),
    sender_info: { id: userId, name: userId.split('@')[0] },
  };
}

interface NovNode {
  id: number;
  name: string;
  key: string;
}

interface NovBubble {
  /** The answer text (messageContent, set with innerHTML). */
  text: string;
  /** The `.search-results` container's items. */
  container: NovNode[] | undefined;
  /** Divs appended after it (summary, intermediate). */
  extras: string[];
  allResults: unknown[];
  hasReceivedContent: boolean;
  groups: { nodes: NovNode[]; score: number }[];
}

/** One finished (or still open) assistant bubble of the Nov page. */
export interface NovAnswer extends PageView {
  /** The frames of this answer (begin … end). */
  frames: Data[];
}

/**
 * The Nov page's `handleStreamData` + `processMessageByType`, over the frames of a connection.
 * Envelope frames (`type`: connected, message_ack, participant lists, errors) show nothing;
 * `message_type: "user"` is a question bubble (another participant's, or a replayed one);
 * `begin-nlweb-response` ends the open answer and opens a block; any other `message_type`
 * goes into the open answer bubble (one is opened when none is): `result` with a list adds item
 * elements (a non-list is rendered as one item), `summary` (`content`) re-renders text and
 * items and appends the summary, `nlws` sets the text to `answer` and the items to `items`,
 * `item_details` adds an item, `ask_user` and unknown types append their `content` as text,
 * an `intermediate_message` renders its `content` as items. `end-nlweb-response` puts the
 * result elements it kept back into the container, best group first, and ends the bubble: when
 * it has no items and no result/nlws/summary came, its text becomes "No answers were found for
 * your query."
 */
export class NovPage {
  readonly questions: string[] = [];
  readonly answers: NovAnswer[] = [];
  readonly envelopes: Data[] = [];
  conversationId: string | undefined;
  private open: { bubble: NovBubble; frames: Data[]; block: boolean } | undefined;
  private ids = 0;
  private nodes = (items: unknown[]): NovNode[] =>
    items.map((i) => ({ id: this.ids++, name: nameOf(i), key: keyOf(i) }));

  /** One frame from the server (or the page's own question). */
  take(d: Data): void {
    if (d.message_type === 'user') {
      this.end();
      const c = d.content;
      this.questions.push(c && typeof c === 'object' ? str((c as Data).query) : str(c));
      return;
    }
    if (d.type === 'conversation_created') this.conversationId = str(d.conversation_id);
    if (d.message_type === 'begin-nlweb-response') {
      this.end();
      this.start().block = true;
      this.open!.frames.push(d);
      return;
    }
    if (d.message_type === 'end-nlweb-response') {
      const o = this.open;
      if (o) {
        o.frames.push(d);
        const b = o.bubble;
        if (b.groups.length > 0 && b.container) {
          b.groups.sort((x, y) => y.score - x.score);
          b.container = b.groups.flatMap((g) => g.nodes);
        }
      }
      this.end();
      return;
    }
    if (d.message_type === undefined || d.message_type === null) {
      this.envelopes.push(d);
      return;
    }
    const o = this.open ?? this.start();
    o.frames.push(d);
    const b = o.bubble;
    // sanitizeMessageData escapes a string `content` before anything renders it.
    const content =
      typeof d.content === 'string' ? d.content.replace(/</g, '&lt;').replace(/>/g, '&gt;') : d.content;
    if (['result', 'nlws', 'summary', 'asking_sites'].includes(str(d.message_type)))
      b.hasReceivedContent = true;
    const rerender = (): void => {
      b.container = b.allResults.length > 0 ? this.nodes(b.allResults) : undefined;
      b.extras = [];
    };
    switch (d.message_type) {
      case 'result': {
        const items = Array.isArray(content) ? content : [content];
        b.allResults = b.allResults.concat(items);
        const nodes = this.nodes(items);
        b.container = [...(b.container ?? []), ...nodes];
        b.groups.push({ nodes, score: scoreOf(items[0]) });
        break;
      }
      case 'nlws':
        if (typeof d.answer === 'string') b.text = `${d.answer}\n\n`;
        if (Array.isArray(d.items)) b.allResults = d.items;
        rerender();
        break;
      case 'summary':
        if (content) {
          rerender();
          b.extras.push(shownText(str(content)));
        }
        break;
      case 'item_details':
        b.allResults.push({ ...d, description: d.details });
        rerender();
        break;
      case 'intermediate_message':
        rerender();
        if (content) b.extras.push(...(typeof content === 'string' ? [...content] : ['(items)']));
        break;
      case 'ask_user':
        if (content) {
          b.text += `${str(content)}\n`;
          rerender();
        }
        break;
      case 'decontextualized_query':
        if (d.decontextualized_query && d.decontextualized_query !== d.original_query) {
          b.text += `Query interpreted as: "${str(d.decontextualized_query)}"\n`;
          rerender();
        }
        break;
      case 'ensemble_result':
        rerender();
        break;
      default:
        if (content) {
          b.text += `${typeof content === 'string' ? content : JSON.stringify(content)}\n`;
          rerender();
        }
    }
  }

  /**
   * The SSE stream closed (EventSource `onerror`): the page closes the EventSource, and shows
   * "Failed to get response" (for 5 s) when no answer is open — as after every answer that
   * ended with end-nlweb-response, NLWeb's own server included — or the open one got no content.
   */
  closed(): void {
    if (this.open?.bubble.hasReceivedContent) return;
    this.end();
    const last = this.answers.at(-1);
    if (last) last.error = 'Failed to get response. Please try again.';
  }

  private start(): { bubble: NovBubble; frames: Data[]; block: boolean } {
    this.open = {
      bubble: {
        text: '',
        container: undefined,
        extras: [],
        allResults: [],
        hasReceivedContent: false,
        groups: [],
      },
      frames: [],
      block: false,
    };
    return this.open;
  }

  private end(): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    const b = o.bubble;
    const texts = [shownText(b.text), ...b.extras]
      .flatMap((t) => t.split('\n'))
      .map((t) => t.trim())
      .filter(Boolean);
    const noResults = b.allResults.length === 0;
    const noContent = !b.hasReceivedContent || (texts.length === 0 && !b.container?.length);
    this.answers.push({
      items: (b.container ?? []).map((n) => n.name),
      keys: (b.container ?? []).map((n) => n.key),
      texts: noResults && noContent ? ['No answers were found for your query.'] : texts,
      completed: o.frames.some((f) => f.message_type === 'end-nlweb-response'),
      events: o.frames,
      frames: o.frames,
    });
  }
}

/** The Nov page on /chat/ws: one socket, as `connectWebSocket` opens it. */
export class NovSocket {
  readonly page = new NovPage();
  private readonly frames: Data[] = [];
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const d = JSON.parse(data.toString()) as Data;
      this.frames.push(d);
      this.page.take(d);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async open(base: string): Promise<NovSocket> {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/chat/ws`);
    const s = new NovSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return s;
  }

  /** Sends a frame as the page does (`sendThroughConnection`). */
  send(frame: Data): void {
    if (frame.message_type === 'user') this.page.take(frame); // the page shows its own question
    this.ws.send(JSON.stringify(frame));
  }

  /** Waits until `done` holds for the frames received so far. */
  async until(done: (frames: Data[]) => boolean, ms = 10_000): Promise<Data[]> {
    const stop = Date.now() + ms;
    while (!done(this.frames)) {
      if (Date.now() > stop)
        throw new Error(`no such frame in ${JSON.stringify(this.frames).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100).unref();
      });
    }
    return this.frames;
  }

  /** Asks a question and waits for its answer's end. */
  async ask(message: Data): Promise<NovAnswer> {
    const ends = this.frames.filter((f) => f.message_type === 'end-nlweb-response').length;
    this.send(message);
    await this.until((fs) => fs.filter((f) => f.message_type === 'end-nlweb-response').length > ends);
    return this.page.answers.at(-1)!;
  }

  received(): Data[] {
    return this.frames;
  }

  close(): void {
    this.ws.close();
  }
}

/** The Nov page with `?mode=sse`: one EventSource to /chat/sse per question. */
export async function novSseAsk(base: string, message: Data, page = new NovPage()): Promise<NovAnswer> {
  page.take(message);
  const url = `${base}/chat/sse?${new URLSearchParams({ message: JSON.stringify(message) }).toString()}`;
  for (const d of await eventSourceGet(url)) page.take(d);
  page.closed();
  return page.answers.at(-1)!;
}
