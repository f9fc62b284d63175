import { describe, expect, it } from 'vitest';
import { childTraceparent, newTraceparent, parseTraceparent } from './trace';

describe('trace ids', () => {
  it('gives every call a well-formed, distinct span id in the parent trace, across pool refills', () => {
    const parent = newTraceparent();
    const { traceId } = parseTraceparent(parent)!;
    const spans = new Set<string>();
    // 2,000 × 8 bytes: the 4 KB pool is refilled several times
    for (let i = 0; i < 2_000; i++) {
      const child = parseTraceparent(childTraceparent(parent));
      expect(child?.traceId).toBe(traceId);
      spans.add(child!.spanId);
    }
    expect(spans.size).toBe(2_000);
  });

  it('starts a new trace for a missing or malformed parent', () => {
    const traces = new Set(
      Array.from({ length: 600 }, () => parseTraceparent(childTraceparent('junk'))!.traceId),
    );
    expect(traces.size).toBe(600);
  });
});
