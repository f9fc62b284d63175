import { randomBytes } from 'node:crypto';

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
  return `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
}

/** The traceparent for a call made from within `parent`: same trace, a new span id. */
export function childTraceparent(parent: string | undefined): string {
  const p = parseTraceparent(parent);
  if (!p) return newTraceparent();
  return `00-${p.traceId}-${randomBytes(8).toString('hex')}-${p.flags}`;
}
