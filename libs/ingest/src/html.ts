/**
 * What a loader needs of an HTML page: the text of its `<script type="application/ld+json">`
 * blocks with their lines, and its canonical URL. Read with htmlparser2's Tokenizer alone, in
 * one linear pass: its Parser keeps the open elements in an array it `unshift`s, so a page of
 * 500 000 nested `<div>` took minutes (quadratic); nothing here depends on nesting.
 */
import { Tokenizer } from 'htmlparser2';
import type { TokenizerCallbacks } from 'htmlparser2';

export interface JsonLdScript {
  text: string;
  /** 1-based line of the `<script` tag. */
  line: number;
}

export interface HtmlLinkedData {
  scripts: JsonLdScript[];
  /** `<link rel="canonical" href>` or `<meta property="og:url" content>`, the first one. */
  canonical?: string;
}

export function htmlLinkedData(html: string): HtmlLinkedData {
  const scripts: JsonLdScript[] = [];
  let canonical: string | undefined;
  // The tag being read: its name, where its `<` is, its attributes (first of a name wins).
  let tag = '';
  let tagStart = 0;
  let attrs: Record<string, string> = {};
  let attrName = '';
  let attrValue = '';
  // Inside a JSON-LD script: its text so far and where its tag began.
  let inLd = false;
  let ldText = '';
  let ldStart = 0;
  // Lines counted once, forward: script positions only grow.
  let lineAt = 0;
  let line = 1;
  const lineOf = (index: number): number => {
    for (let i = html.indexOf('\n', lineAt); i >= 0 && i < index; i = html.indexOf('\n', i + 1)) {
      line++;
      lineAt = i + 1;
    }
    return line;
  };

  const openTag = (): void => {
    if (tag === 'script' && (attrs.type ?? '').trim().toLowerCase() === 'application/ld+json') {
      inLd = true;
      ldText = '';
      ldStart = tagStart;
    } else if (tag === 'link' && (attrs.rel ?? '').toLowerCase() === 'canonical' && attrs.href) {
      canonical ??= attrs.href;
    } else if (tag === 'meta' && attrs.property === 'og:url' && attrs.content) {
      canonical ??= attrs.content;
    }
  };

  const none = (): void => undefined;
  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      tag = html.slice(start, end).toLowerCase();
      tagStart = start - 1;
      attrs = {};
    },
    onattribname(start, end) {
      attrName = html.slice(start, end).toLowerCase();
      attrValue = '';
    },
    onattribdata(start, end) {
      attrValue += html.slice(start, end);
    },
    onattribentity(codepoint) {
      attrValue += String.fromCodePoint(codepoint);
    },
    onattribend() {
      if (!Object.hasOwn(attrs, attrName)) attrs[attrName] = attrValue;
    },
    onopentagend: openTag,
    onselfclosingtag: openTag,
    ontext(start, end) {
      if (inLd) ldText += html.slice(start, end);
    },
    ontextentity(codepoint) {
      if (inLd) ldText += String.fromCodePoint(codepoint);
    },
    onclosetag(start, end) {
      if (inLd && html.slice(start, end).toLowerCase() === 'script') {
        inLd = false;
        scripts.push({ text: ldText, line: lineOf(ldStart) });
      }
    },
    oncdata: none,
    oncomment: none,
    ondeclaration: none,
    onprocessinginstruction: none,
    // A script still open at the end of the page ends with it (as a browser reads it).
    onend() {
      if (inLd) scripts.push({ text: ldText, line: lineOf(ldStart) });
      inLd = false;
    },
  };
  const tokenizer = new Tokenizer({ decodeEntities: false }, callbacks);
  tokenizer.write(html);
  tokenizer.end();
  return { scripts, ...(canonical !== undefined ? { canonical } : {}) };
}
