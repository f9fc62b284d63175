/**
 * NLWeb's generate mode answered with one `nlws` (the answer and the items it cites) and no
 * result list. Its pages rely on that: the May 2025 page appends the nlws items to the results
 * it already holds and lists both at the end (every item twice); the Nov 2025 page re-sorts the
 * result elements it kept over the cited items. askbus's router streams the ranked results
 * before the answer, so for those pages the results of a generate question are held back:
 * dropped when the answer comes, sent before the end when it does not.
 */
import type { Message } from '@askbus/contracts';

export class GenerateHold {
  private held: Message[] = [];
  private answered = false;

  constructor(private readonly mode: string) {}

  /** The messages to render now, in order, for the next message of the stream. */
  pass(m: Message): Message[] {
    if (this.mode !== 'generate') return [m];
    if (m.message_type === 'result' && Array.isArray(m.content)) {
      if (!this.answered) this.held.push(m);
      return [];
    }
    if (m.message_type === 'nlws') {
      this.answered = true;
      this.held = [];
      return [m];
    }
    if (m.message_type === 'end-nlweb-response') {
      const out = [...this.held, m];
      this.held = [];
      return out;
    }
    return [m];
  }
}
