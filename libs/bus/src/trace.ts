import { randomFillSync } from 'node:crypto';

/**
 * Random ids from a pool filled 4 KB at a time: a span id is made for every call and every
 * handler, and a randomBytes call each (a system call) cost about a millisecond a query.
 */
const POOL = Buffer.alloc(4096);
let poolAt = POOL.length;
function randomHex(bytes: number): string {
  if (poolAt + bytes > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const hex = POOL.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

// W3C Trace Context (https://www.w3.org/TR/trace-context/): version-traceid-parentid-flags.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function parseTraceparent(
  value: string | undefined,
): { traceId: string; spanId: string; flags: string } | undefined {
  const m = value ? TRACEPARENT.exec(value.trim()) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, flags: m[3]! };
}

/** A new trace, for a request that arrived without one. */
export function newTraceparent(): string {
  return `00-${randomHex(16)}-${randomHex(8)}-01`;
}

/** The traceparent for a call made from within `parent`: same trace, a new span id. */
export function childTraceparent(parent: string | undefined): string {
  const p = parseTraceparent(parent);
  if (!p) return newTraceparent();
  return `00-${p.traceId}-${randomHex(8)}-${p.flags}`;
}
