import type { AskRequest, MessageBody, ResultItem } from '@askbus/contracts';

/**
 * What follows the ranked results (NLWeb's PostRanking): a location map when most results have
 * an address, and the summarize / generate modes. Until the language-model issue lands, the
 * local default writes both answers from the ranked items themselves, citing them, and says so.
 */
export function* postRanking(req: AskRequest, results: ResultItem[]): Generator<MessageBody> {
  const located = results
    .map((r) => ({ title: r.name, address: addressOf(r.schema_object) }))
    .filter((l): l is { title: string; address: string } => Boolean(l.address));
  if (results.length > 0 && located.length * 2 >= results.length) {
    yield { message_type: 'results_map', '@type': 'LocationMap', locations: located };
  }
  if (results.length === 0) return;
  const top = results.slice(0, 3);
  if (req.mode === 'summarize') {
    yield {
      message_type: 'result',
      '@type': 'Summary',
      content: `The best matches for "${req.query}" are ${listNames(top)}. ${top[0]!.description}`,
    };
  } else if (req.mode === 'generate') {
    yield {
      message_type: 'nlws',
      '@type': 'GeneratedAnswer',
      answer: `For "${req.query}", ${listNames(top)} fit best. ${top.map((r) => `${r.name}: ${r.description}`).join(' ')}`,
      items: top,
    };
  }
}

function listNames(items: ResultItem[]): string {
  const names = items.map((r) => r.name);
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function addressOf(obj: Record<string, unknown>): string | undefined {
  for (const key of ['address', 'location', 'streetAddress', 'postalAddress']) {
    const v = obj[key];
    if (typeof v === 'string' && v.trim()) return v.trim();
    if (v && typeof v === 'object') {
      const parts = [
        'streetAddress',
        'addressLocality',
        'addressRegion',
        'postalCode',
        'addressCountry',
        'name',
      ]
        .map((k) => (v as Record<string, unknown>)[k])
        .filter((p): p is string => typeof p === 'string' && p.trim() !== '');
      if (parts.length) return parts.join(', ');
      const nested = addressOf(v as Record<string, unknown>);
      if (nested) return nested;
    }
  }
  return undefined;
}
