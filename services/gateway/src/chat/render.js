// Renderers of NLWeb messages into DOM nodes. All data goes in as text nodes or checked
// attributes: never innerHTML, and only http(s) links and http(s)/data:image images.
/* global document, location */

/**
 * Builds an element. `attrs` values: strings set attributes, `false`/`undefined` skip them,
 * functions under `on*` keys become listeners. Children: nodes or text.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false || v === null) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, ...children);
  return node;
}

function append(node, ...children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** An absolute http(s) URL, or undefined for anything else (javascript:, data:, junk). */
export function safeHref(value) {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  try {
    const u = new URL(value, location.href);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** An image source: an http(s) URL or a data:image/ URL (not SVG, which may carry script). */
export function safeImage(value) {
  if (typeof value !== 'string') return undefined;
  if (/^data:image\/(png|jpe?g|gif|webp|avif);base64,[a-z0-9+/=\s]+$/i.test(value)) return value;
  return safeHref(value);
}

/** The first usable image of a schema.org object: `image` as text, ImageObject, or a list. */
export function imageOf(schema) {
  const pick = (v, depth = 0) => {
    if (depth > 3 || v === null || v === undefined) return undefined;
    if (typeof v === 'string') return safeImage(v);
    if (Array.isArray(v)) {
      for (const x of v) {
        const found = pick(x, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    if (typeof v === 'object') return pick(v.contentUrl ?? v.url ?? v.thumbnailUrl, depth + 1);
    return undefined;
  };
  if (!schema || typeof schema !== 'object') return undefined;
  return pick(Array.isArray(schema) ? schema[0]?.image : schema.image);
}

/** A readable one-line text of any JSON value (schema.org values are often objects or lists). */
export function textOf(v, depth = 0) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (depth > 3) return '…';
  if (Array.isArray(v))
    return v
      .map((x) => textOf(x, depth + 1))
      .filter(Boolean)
      .join(', ');
  if (typeof v === 'object') {
    if (typeof v.name === 'string') return v.name;
    if ('value' in v)
      return [textOf(v.value, depth + 1), textOf(v.unitText, depth + 1)].filter(Boolean).join(' ');
    return Object.entries(v)
      .filter(([k]) => !k.startsWith('@'))
      .map(([k, x]) => `${k}: ${textOf(x, depth + 1)}`)
      .join('; ');
  }
  return String(v);
}

const scoreText = (score) =>
  typeof score === 'number' && Number.isFinite(score) ? String(Math.round(score)) : '';

/** A link when the URL is safe, plain text otherwise. */
function linkOr(text, url, attrs = {}) {
  const href = safeHref(url);
  return href
    ? el('a', { href, rel: 'noopener noreferrer', target: '_blank', ...attrs }, text)
    : el('span', attrs, text);
}

/**
 * A result card: image when the schema object has one, linked name, score, site, description, URL.
 * @param {Record<string, unknown>} item an NLWeb result item
 * @param {number} [rank]
 */
export function card(item, rank) {
  const name = textOf(item.name) || textOf(item.url) || 'Untitled';
  const image = imageOf(item.schema_object);
  const score = scoreText(item.score);
  const type = textOf(item.schema_object?.['@type'] ?? item['@type']);
  const img = image
    ? el('img', { src: image, alt: '', loading: 'lazy', decoding: 'async', class: 'thumb' })
    : null;
  // A broken or offline image is dropped rather than shown as a broken icon.
  img?.addEventListener('error', () => img.remove());
  const href = safeHref(item.url);
  return el(
    'li',
    { class: 'card', 'data-url': textOf(item.url) },
    el(
      'article',
      { 'aria-label': name },
      img,
      el(
        'div',
        { class: 'card-body' },
        el(
          'h3',
          { class: 'card-title' },
          rank ? el('span', { class: 'rank', 'aria-hidden': 'true' }, `${rank}.`) : null,
          linkOr(name, item.url),
        ),
        el(
          'p',
          { class: 'meta' },
          score ? el('span', { class: 'score', title: 'relevance score, 0 to 100' }, `score ${score}`) : null,
          item.site ? el('span', { class: 'site' }, textOf(item.site)) : null,
          type && type !== 'Item' ? el('span', { class: 'type' }, type) : null,
        ),
        item.description ? el('p', { class: 'description' }, textOf(item.description)) : null,
        href
          ? el(
              'p',
              { class: 'url' },
              el('a', { href, rel: 'noopener noreferrer', target: '_blank', tabindex: '-1' }, href),
            )
          : null,
      ),
    ),
  );
}

/** A titled block of the answer (summary, generated answer, details…). */
function block(kind, title, ...children) {
  return el('section', { class: `block ${kind}`, 'aria-label': title }, el('h3', {}, title), ...children);
}

export function summary(text) {
  return block('summary', 'Summary', el('p', {}, textOf(text)));
}

/** A generated answer (nlws) with the items it cites. */
export function generated(m) {
  const items = Array.isArray(m.items) ? m.items : [];
  return block(
    'generated',
    'Answer',
    el('p', {}, textOf(m.answer)),
    items.length
      ? el(
          'div',
          { class: 'cited' },
          el('h4', {}, 'Sources'),
          el(
            'ol',
            {},
            items.map((it) =>
              el(
                'li',
                {},
                linkOr(textOf(it.name) || textOf(it.url), it.url),
                it.description ? el('span', { class: 'cite-desc' }, ` — ${textOf(it.description)}`) : null,
              ),
            ),
          ),
        )
      : null,
  );
}

/** Key/value rows of a schema.org object, for details and comparisons. */
function propertyRows(schema, limit = 30) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return [];
  return Object.entries(schema)
    .filter(([k, v]) => !k.startsWith('@') && k !== 'image' && textOf(v) !== '')
    .slice(0, limit);
}

function definitionList(rows) {
  return el(
    'dl',
    { class: 'props' },
    rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, textOf(v))]),
  );
}

/** item_details: the item, the details asked for (text or an object), the explanation. */
export function itemDetails(m) {
  const details = m.details;
  const title = textOf(m.name) || 'Item details';
  return block(
    'details',
    'Details',
    el('h4', {}, linkOr(title, m.url)),
    scoreText(m.score)
      ? el('p', { class: 'meta' }, el('span', { class: 'score' }, `score ${scoreText(m.score)}`))
      : null,
    details && typeof details === 'object' && !Array.isArray(details)
      ? definitionList(Object.entries(details))
      : el('p', {}, textOf(details)),
    m.explanation ? el('p', { class: 'explanation' }, textOf(m.explanation)) : null,
    !details && m.schema_object ? definitionList(propertyRows(m.schema_object)) : null,
  );
}

/** compare_items: the comparison text and a table of the two items' properties. */
export function compareItems(m) {
  const items = [m.item1, m.item2].map((x) => (x && typeof x === 'object' ? x : {}));
  const keys = [];
  for (const it of items)
    for (const [k] of propertyRows(it.schema_object)) if (!keys.includes(k)) keys.push(k);
  const names = items.map((it, i) => textOf(it.name) || `Item ${i + 1}`);
  return block(
    'compare',
    'Comparison',
    m.comparison ? el('p', {}, textOf(m.comparison)) : null,
    el(
      'table',
      { class: 'compare-table' },
      el('caption', { class: 'visually-hidden' }, `${names[0]} compared with ${names[1]}`),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, 'Property'),
          items.map((it, i) => el('th', { scope: 'col' }, linkOr(names[i], it.url))),
        ),
      ),
      el(
        'tbody',
        {},
        keys.map((k) =>
          el(
            'tr',
            {},
            el('th', { scope: 'row' }, k),
            items.map((it) => el('td', {}, textOf(it.schema_object?.[k]))),
          ),
        ),
      ),
    ),
  );
}

/** ensemble_result: a theme, grouped recommendations and tips. */
export function ensemble(m) {
  const result = m.result && typeof m.result === 'object' ? m.result : m;
  const rec =
    result.recommendations && typeof result.recommendations === 'object' ? result.recommendations : {};
  const items = Array.isArray(rec.items) ? rec.items : [];
  const tips = Array.isArray(rec.overall_tips) ? rec.overall_tips : [];
  if (result.success === false) {
    return block(
      'ensemble',
      'Recommendations',
      el('p', { class: 'error-text' }, textOf(result.error) || 'No ensemble could be built.'),
    );
  }
  return block(
    'ensemble',
    textOf(rec.theme) || 'Recommendations',
    el(
      'ol',
      { class: 'cards ensemble-items' },
      items.map((it) => {
        const li = card({ ...it, description: textOf(it.description ?? it.why_recommended) });
        const body = li.querySelector('.card-body');
        if (it.category) body?.prepend(el('p', { class: 'category' }, textOf(it.category)));
        if (it.why_recommended && it.description) {
          body?.querySelector('.description')?.after(el('p', { class: 'why' }, textOf(it.why_recommended)));
        }
        return li;
      }),
    ),
    tips.length
      ? [
          el('h4', {}, 'Tips'),
          el(
            'ul',
            { class: 'tips' },
            tips.map((t) => el('li', {}, textOf(t))),
          ),
        ]
      : null,
  );
}

/** results_map: the locations as a list (no map tiles: they would be an external resource). */
export function locations(m) {
  const list = Array.isArray(m.locations) ? m.locations : [];
  return block(
    'map',
    'Locations',
    el(
      'ul',
      { class: 'locations' },
      list.map((l) =>
        el('li', {}, el('strong', {}, textOf(l?.title)), ' — ', el('span', {}, textOf(l?.address))),
      ),
    ),
  );
}

/** A line of progress or a notice (intermediate_message, status, no_results, ask_user…). */
export function note(kind, text) {
  return el('p', { class: `note ${kind}` }, text);
}

/** An error: role=alert so screen readers announce it. */
export function errorBox(title, detail) {
  return el(
    'div',
    { class: 'error', role: 'alert' },
    el('strong', {}, title),
    detail ? el('span', {}, ` ${detail}`) : null,
  );
}

export { append };
