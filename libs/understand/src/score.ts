import type { StoredItem, Understanding } from '@askbus/contracts';
import { parseQuery, scoreItem, type AnalyzedItem, type ParsedQuery } from '@askbus/search-core';
import { describeItem } from './describe';
import { satisfies, orderFit, targetValue } from './evaluate';
import { extractFacts, factsByPath, type Fact } from './facts';
import { showQuantity } from './format';

/**
 * The local ranker's judgement of an item for an understood question: how well it satisfies the
 * constraints, where it stands on the orders, how well it matches the free words, and the
 * question's named items first. Scores 0..100 as NLWeb's; the description is for people, the
 * diagnostics go to `debug`.
 */
export interface UnderstoodScore {
  score: number;
  description: string;
  debug: string;
}

/** A prepared question: its understanding and its free words analyzed once for a batch. */
export interface PreparedQuestion {
  u: Understanding;
  words: ParsedQuery | undefined;
}

export function prepareQuestion(u: Understanding): PreparedQuestion {
  const text = u.freeText.trim();
  return { u, words: text ? parseQuery(text) : undefined };
}

type Item = Pick<StoredItem, 'name' | '@type' | 'schema_object'> & { url?: string };

/**
 * What scoring reads of an item, computed once per item (a ranker may keep it between
 * questions): its facts by path and its words as search-core analyses them.
 */
export interface ItemAnalysis {
  facts: Map<string, Fact[]>;
  words: AnalyzedItem;
}

export function scoreUnderstood(q: PreparedQuestion, item: Item, analysis?: ItemAnalysis): UnderstoodScore {
  const { u } = q;
  const facts = analysis?.facts ?? factsByPath(extractFacts(item.schema_object));
  const met: string[] = [];
  const missed: string[] = [];
  for (const k of u.constraints) (satisfies(k, facts) ? met : missed).push(k.text);
  let fitSum = 0;
  const orderNotes: string[] = [];
  for (const o of u.orders) {
    const fit = orderFit(o, facts) ?? 0;
    fitSum += fit;
    const v = targetValue(o.target, facts);
    orderNotes.push(`${o.text} ${v === undefined ? 'unknown' : `(${Math.round(fit * 100)}%)`}`);
  }
  const fit = u.orders.length ? fitSum / u.orders.length : undefined;
  const lexical = q.words ? scoreItem(q.words, analysis?.words ?? item).score / 100 : undefined;
  const named = item.url !== undefined && u.named.some((n) => n.exact && n.url === item.url);
  let score: number;
  if (named) score = 100;
  else if (missed.length > 0) score = Math.round(45 * (met.length / Math.max(1, u.constraints.length)));
  else {
    // every constraint met: 62..98 by the orders and the free words
    const parts: number[] = [];
    if (fit !== undefined) parts.push(fit);
    if (lexical !== undefined) parts.push(fit !== undefined ? lexical * 0.5 + 0.25 : lexical);
    const quality = parts.length ? parts.reduce((a, b) => a + b, 0) / parts.length : 0.5;
    score = Math.round(62 + 36 * quality);
    if (u.named.length > 0) score = Math.min(score, 95);
  }
  const extra: string[] = [];
  for (const k of u.constraints) {
    if (k.kind !== 'range' || !('derived' in k.target)) continue;
    const v = targetValue(k.target, facts);
    if (v !== undefined)
      extra.push(
        `${k.target.derived.label.replace(/\s*\(.*\)$/, '')} ${showQuantity(v, k.target.derived.unit ? { unit: k.target.derived.unit, dimension: 'money' } : undefined)}`,
      );
  }
  // an item that misses a constraint is not shown (below NLWeb's 51): a name is description enough
  const description =
    missed.length > 0 && !named
      ? itemName(item)
      : describeItem({
          name: itemName(item),
          facts,
          ...(typeof item.schema_object.description === 'string'
            ? { description: item.schema_object.description }
            : {}),
          asked: u.asked,
          extra,
        });
  const debug = [
    met.length ? `matches: ${met.join(', ')}` : '',
    missed.length ? `does not match: ${missed.join(', ')}` : '',
    orderNotes.length ? `orders: ${orderNotes.join(', ')}` : '',
    lexical !== undefined ? `words: ${Math.round(lexical * 100)}%` : '',
    named ? 'named in the question' : '',
  ]
    .filter(Boolean)
    .join('; ');
  return { score: Math.max(0, Math.min(100, score)), description, debug };
}

function itemName(item: Item): string {
  if (item.name) return item.name;
  const n = item.schema_object.name;
  return typeof n === 'string' ? n : item['@type'];
}
