import { describeFallback, type FallbackReason } from '@askbus/llm';

/**
 * The words of a degraded query: items the local scorer scored for a failing model, tools it
 * chose, candidates sent unranked when no ranker answered at all.
 */

/** Why the local scorer stood in, counted per reason (from ScoredItem.fallbackReason). */
export class FallbackTally {
  readonly byReason = new Map<string, number>();

  add(reason: string | undefined): void {
    if (reason !== undefined) this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + 1);
  }

  get total(): number {
    let n = 0;
    for (const c of this.byReason.values()) n += c;
    return n;
  }
}

/** "12 of 50 items were scored by the local scorer instead of the model: …(8), …(4)." */
export function locallyScoredNote(tally: FallbackTally, of: number): string {
  const reasons = [...tally.byReason]
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${reasonInWords(reason)} (${n})`)
    .join('; ');
  const n = tally.total;
  return `${n} of ${of} ${of === 1 ? 'item was' : 'items were'} scored by the local scorer instead of the language model: ${reasons}.`;
}

/** The status of a query whose ranking calls all failed: the candidates go out unranked. */
export function unrankedNote(shown: number, candidates: number, failure: string): string {
  return `No ranker could score the candidates (${failure}): these ${shown} of ${candidates} candidates are unranked, in retrieval order.`;
}

/** The description of an item sent unranked because no ranker answered. */
export const UNRANKED_NO_RANKER = 'Unranked: no ranker could score it.';

const KNOWN: ReadonlySet<string> = new Set<FallbackReason>([
  'malformed',
  'timeout',
  'unavailable',
  'rate_limited',
  'bad_request',
  'circuit_open',
  'unsupported',
  'incomplete',
]);

/** A fallback reason in words; one this router does not know is shown as it came. */
export function reasonInWords(reason: string): string {
  return KNOWN.has(reason) ? describeFallback(reason as FallbackReason) : reason;
}
