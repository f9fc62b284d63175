/**
 * How deeply a JSON text nests, found in one linear pass that builds nothing: so that a body of
 * millions of `[` is refused after its first few hundred bytes, before JSON.parse spends seconds
 * on it (V8 takes ~1 µs a level and blocks the event loop meanwhile).
 *
 * Brackets inside strings do not count; a backslash escapes the next character. The scan works
 * on UTF-8 bytes or on UTF-16 text alike: every character it looks at is ASCII, and no byte of a
 * multi-byte UTF-8 sequence is ASCII. Invalid JSON is not its business (JSON.parse says so).
 */

const OPEN_ARRAY = 0x5b; // [
const OPEN_OBJECT = 0x7b; // {
const CLOSE_ARRAY = 0x5d; // ]
const CLOSE_OBJECT = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/** The nesting of a JSON text fed in pieces (a request body as it arrives). */
export class JsonNestingScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private exceeded = false;

  constructor(readonly maxDepth: number) {}

  /** Feeds the next piece; false once the nesting went deeper than `maxDepth` (and from then on). */
  push(piece: Uint8Array | string): boolean {
    if (this.exceeded) return false;
    const text = typeof piece === 'string';
    const n = piece.length;
    let { depth, inString, escaped } = this;
    for (let i = 0; i < n; i++) {
      const c = text ? piece.charCodeAt(i) : (piece as Uint8Array)[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > this.maxDepth) {
          this.exceeded = true;
          return false;
        }
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth > 0) depth--;
      } else if (c === QUOTE) inString = true;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return true;
  }
}

/** Whether a whole JSON text nests deeper than `maxDepth`. */
export function jsonNestingExceeds(json: Uint8Array | string, maxDepth: number): boolean {
  return !new JsonNestingScanner(maxDepth).push(json);
}
