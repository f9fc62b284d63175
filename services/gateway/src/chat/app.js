// The chat page: asks /ask with fetch, reads the SSE answer as it streams, renders each
// NLWeb message. A conversation is the previous queries (`prev`) and a `conversation_id`.
// A gateway with API keys answers 401: the page then asks for a key, keeps it in this tab's
// sessionStorage and sends it as `Authorization: Bearer` on every API call.
/* global document, location, history, matchMedia */
import { readMessages } from './sse.js';
import {
  card,
  compareItems,
  el,
  ensemble,
  errorBox,
  generated,
  itemDetails,
  locations,
  note,
  summary,
  textOf,
} from './render.js';

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const form = /** @type {HTMLFormElement} */ ($('ask-form'));
const queryInput = /** @type {HTMLInputElement} */ ($('query'));
const siteSelect = /** @type {HTMLSelectElement} */ ($('site'));
const modeSelect = /** @type {HTMLSelectElement} */ ($('mode'));
const stopButton = /** @type {HTMLButtonElement} */ ($('stop'));
const conversation = $('conversation');
const sitesStatus = $('sites-status');
const conversationInfo = $('conversation-info');
const keyForm = /** @type {HTMLFormElement} */ ($('key-form'));
const keyInput = /** @type {HTMLInputElement} */ ($('api-key'));
const keyTitle = $('key-title');

const KEY_ITEM = 'askbus.apiKey';

/** The API key the user gave in this tab ('' for none); storage may be disabled. */
function storedKey() {
  try {
    return sessionStorage.getItem(KEY_ITEM) ?? '';
  } catch {
    return '';
  }
}

function storeKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_ITEM, key);
    else sessionStorage.removeItem(KEY_ITEM);
  } catch {
    // storage disabled: the key is asked for again on the next 401
  }
}

/** Headers of an API call: `extra`, plus the API key when there is one. */
function apiHeaders(extra = {}) {
  const key = storedKey();
  return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
}

/** What to run again once the user gives a key. */
const waitingForKey = [];

/**
 * Shows the key field after a 401; `sent` is the key the refused call carried ('' for none),
 * `retry` runs once a key is entered.
 */
function askForKey(sent, retry) {
  if (sent && storedKey() === sent) storeKey('');
  keyTitle.textContent = sent
    ? 'The gateway refused this API key; enter another one.'
    : 'This gateway needs an API key.';
  waitingForKey.push(retry);
  keyForm.hidden = false;
  keyInput.focus();
}

keyForm.addEventListener('submit', (e) => {
  e.preventDefault();
  const key = keyInput.value.trim();
  if (!key) return;
  storeKey(key);
  keyInput.value = '';
  keyForm.hidden = true;
  for (const retry of waitingForKey.splice(0)) retry();
});

function newId() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const state = {
  conversationId: newId(),
  /** @type {string[]} */
  prev: [],
  /** @type {AbortController | null} */
  current: null,
};

function showConversationInfo() {
  const n = state.prev.length;
  conversationInfo.textContent = n
    ? `This conversation has ${n} question${n === 1 ? '' : 's'}; the next one is asked with ${n === 1 ? 'it' : 'them'} as context.`
    : '';
  conversationInfo.dataset.conversationId = state.conversationId;
}

function setBusy(busy) {
  stopButton.disabled = !busy;
  form.setAttribute('aria-busy', busy ? 'true' : 'false');
}

/** The part of the page that shows one question and its answer. */
function exchange(query, site, mode) {
  $('empty')?.remove();
  const status = el('p', { class: 'state', role: 'status' }, 'Searching…');
  const progress = el('div', { class: 'progress' });
  const blocks = el('div', { class: 'blocks' });
  const cards = el('ol', { class: 'cards results', 'aria-label': 'Results' });
  const siteLabel = site === 'all' ? 'all sites' : site;
  const section = el(
    'section',
    { class: 'exchange', 'aria-busy': 'true', 'data-mode': mode, 'data-site': site },
    el('h2', { class: 'question' }, el('span', { class: 'visually-hidden' }, 'You asked: '), query),
    el('p', { class: 'asked-of' }, `${siteLabel} · ${mode}`),
    progress,
    blocks,
    cards,
    status,
  );
  conversation.append(section);
  const still = matchMedia('(prefers-reduced-motion: reduce)').matches;
  section.scrollIntoView({ block: 'start', behavior: still ? 'auto' : 'smooth' });
  let count = 0;
  /** @type {HTMLElement | null} */
  let answer = null;
  return {
    section,
    status(text) {
      status.textContent = text;
    },
    addItems(items) {
      for (const item of items) {
        if (item && typeof item === 'object') cards.append(card(item, ++count));
      }
    },
    get count() {
      return count;
    },
    addBlock(node) {
      blocks.append(node);
    },
    /** A generated answer comes twice (first without its items): keep only the latest. */
    setAnswer(node) {
      if (answer) answer.replaceWith(node);
      else blocks.prepend(node);
      answer = node;
    },
    progress(node) {
      progress.append(node);
    },
    error(title, detail) {
      section.classList.add('failed');
      blocks.append(errorBox(title, detail));
    },
    done() {
      section.setAttribute('aria-busy', 'false');
    },
  };
}

/** Renders one NLWeb message into the exchange; returns true for the end of the answer. */
function handle(ex, m) {
  const type = m.message_type;
  switch (type) {
    case 'begin-nlweb-response':
      ex.status('Searching…');
      return false;
    case 'end-nlweb-response':
      return true;
    case 'result':
      if (Array.isArray(m.content)) ex.addItems(m.content);
      else if (m['@type'] === 'Summary' || typeof m.content === 'string') ex.addBlock(summary(m.content));
      ex.status(`Searching… ${ex.count} result${ex.count === 1 ? '' : 's'} so far`);
      return false;
    case 'nlws':
      ex.setAnswer(generated(m));
      return false;
    case 'item_details':
      ex.addBlock(itemDetails(m));
      return false;
    case 'compare_items':
      ex.addBlock(compareItems(m));
      return false;
    case 'ensemble_result':
      ex.addBlock(ensemble(m));
      return false;
    case 'results_map':
      ex.addBlock(locations(m));
      return false;
    case 'intermediate_message':
    case 'status':
      if (Array.isArray(m.content)) ex.addItems(m.content);
      else ex.progress(note('progress-line', textOf(m.content ?? m.message)));
      return false;
    case 'decontextualized_query':
      ex.progress(note('interpreted', `Query interpreted as: ${textOf(m.decontextualized_query)}`));
      return false;
    case 'no_results':
      ex.addBlock(note('no-results', textOf(m.content ?? m.message) || 'No results.'));
      return false;
    case 'ask_user':
      ex.addBlock(note('ask-user', textOf(m.content ?? m.message)));
      return false;
    case 'site_is_irrelevant_to_query':
      ex.addBlock(note('irrelevant', textOf(m.content ?? m.message)));
      return false;
    case 'error':
      ex.error('The answer failed:', [textOf(m.error), m.code ? `(${textOf(m.code)})` : ''].join(' ').trim());
      return false;
    default:
      return false; // debug and tool-internal messages (tool_selection, retrieval_count…)
  }
}

/** The text of an HTTP error body: the gateway's JSON `error`, or the start of the text. */
async function httpError(res) {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === 'string') return body.error;
  } catch {
    // not JSON
  }
  return text.slice(0, 300) || res.statusText;
}

async function ask(query) {
  state.current?.abort();
  const controller = new AbortController();
  state.current = controller;
  const site = siteSelect.value || 'all';
  const mode = modeSelect.value || 'list';
  const params = new URLSearchParams({ query, site, mode, streaming: 'true' });
  if (state.prev.length) params.set('prev', JSON.stringify(state.prev));
  params.set('conversation_id', state.conversationId);
  state.prev.push(query);
  showConversationInfo();

  const ex = exchange(query, site, mode);
  setBusy(true);
  let ended = false;
  const sentKey = storedKey();
  try {
    const res = await fetch(`/ask?${params}`, {
      headers: apiHeaders({ accept: 'text/event-stream' }),
      signal: controller.signal,
      cache: 'no-store',
    });
    if (res.status === 401) {
      // Not asked yet: out of the conversation until it is asked again with a key.
      if (state.prev.at(-1) === query) state.prev.pop();
      showConversationInfo();
      ex.error('The gateway needs an API key:', await httpError(res));
      ex.status('Waiting for an API key.');
      askForKey(sentKey, () => {
        ex.section.remove();
        void ask(query);
      });
      return;
    }
    if (!res.ok) {
      ex.error(`The gateway answered HTTP ${res.status}:`, await httpError(res));
      ex.status('Failed.');
      return;
    }
    if (!res.body) throw new Error('the response has no body');
    await readMessages(res.body, (m) => {
      if (ended) return;
      if (handle(ex, m)) ended = true;
      if (ended) {
        ex.status(ex.count ? `Done: ${ex.count} result${ex.count === 1 ? '' : 's'}.` : 'Done.');
      }
    });
    if (!ended) {
      ex.error('The answer was cut off:', 'the connection closed before the answer was complete.');
      ex.status('Incomplete.');
    }
  } catch (err) {
    if (controller.signal.aborted) {
      ex.status(`Stopped${ex.count ? ` after ${ex.count} result${ex.count === 1 ? '' : 's'}` : ''}.`);
      ex.section.classList.add('stopped');
    } else if (!ended) {
      const detail = err instanceof Error ? err.message : String(err);
      ex.error('The connection to the gateway was lost:', detail);
      ex.status('Failed.');
    }
  } finally {
    ex.done();
    if (state.current === controller) {
      state.current = null;
      setBusy(false);
    }
  }
}

async function loadSites(wanted) {
  sitesStatus.textContent = 'Loading sites…';
  sitesStatus.classList.remove('error-text');
  const sentKey = storedKey();
  try {
    const res = await fetch('/sites?streaming=false', { cache: 'no-store', headers: apiHeaders() });
    if (res.status === 401) {
      sitesStatus.textContent = 'Enter an API key to load the list of sites.';
      askForKey(sentKey, () => void loadSites(wanted ?? siteSelect.value));
      return;
    }
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${await httpError(res)}`);
    const body = await res.json();
    const details = Array.isArray(body.details) ? body.details : (body.sites ?? []).map((name) => ({ name }));
    for (const d of details) {
      const name = textOf(d.name);
      if (!name) continue;
      const count = typeof d.itemCount === 'number' ? ` (${d.itemCount} items)` : '';
      siteSelect.append(el('option', { value: name }, `${name}${count}`));
    }
    sitesStatus.textContent = '';
  } catch (err) {
    sitesStatus.textContent = `Could not load the list of sites (${err instanceof Error ? err.message : err}); asking all sites.`;
    sitesStatus.classList.add('error-text');
  }
  if (wanted && [...siteSelect.options].some((o) => o.value === wanted)) siteSelect.value = wanted;
}

/** Keeps site and mode in the address, so a reload or a shared link asks the same way. */
function rememberChoices() {
  const url = new URL(location.href);
  url.searchParams.set('site', siteSelect.value);
  url.searchParams.set('mode', modeSelect.value);
  url.searchParams.delete('query');
  history.replaceState(null, '', url);
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const query = queryInput.value.trim();
  if (!query) return;
  queryInput.value = '';
  void ask(query);
});

stopButton.addEventListener('click', () => {
  state.current?.abort();
  queryInput.focus();
});

$('new-conversation').addEventListener('click', () => {
  state.current?.abort();
  state.conversationId = newId();
  state.prev = [];
  conversation.replaceChildren(
    el('p', { id: 'empty', class: 'empty' }, 'New conversation: ask a question below.'),
  );
  showConversationInfo();
  queryInput.focus();
});

siteSelect.addEventListener('change', rememberChoices);
modeSelect.addEventListener('change', rememberChoices);

const initial = new URL(location.href).searchParams;
const initialMode = initial.get('mode');
if (initialMode && [...modeSelect.options].some((o) => o.value === initialMode))
  modeSelect.value = initialMode;
showConversationInfo();
await loadSites(initial.get('site'));
document.body.dataset.ready = 'true';
const initialQuery = initial.get('query');
if (initialQuery?.trim()) void ask(initialQuery.trim());
else queryInput.focus();
