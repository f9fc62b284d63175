import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import { DotKernel, SIMD_DOTS_WASM } from './simd-dots';

describe('DotKernel', () => {
  it('runs the module its WebAssembly text assembles to', async () => {
    const wabt = await wabtInit();
    const text = readFileSync(fileURLToPath(new URL('./simd-dots.wat', import.meta.url)), 'utf8');
    const assembled = wabt.parseWat('simd-dots.wat', text, { simd: true }).toBinary({}).buffer;
    expect(Buffer.from(assembled).equals(SIMD_DOTS_WASM)).toBe(true);
  });

  it('sums the products of each row with the query, extremes included', () => {
    const dims = 48;
    const kernel = DotKernel.create(dims)!;
    expect(kernel).toBeDefined();
    let seed = 7;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const code = (): number => Math.round((next() * 2 - 1) * 32767);
    for (let i = 0; i < dims; i++) kernel.query[i] = code();
    const rows = kernel.capacity;
    for (let i = 0; i < rows * dims; i++) kernel.rows[i] = code();
    // row 0 at the extremes: every product 32767², or all −32767·32767
    kernel.query.fill(32767, 0, 16);
    kernel.rows.fill(32767, 0, 16);
    kernel.rows.fill(-32767, dims, dims + 16);
    const dots = kernel.dots(rows);
    for (let r = 0; r < rows; r++) {
      let exact = 0; // below 2^53: exact in a double
      for (let i = 0; i < dims; i++) exact += kernel.rows[r * dims + i]! * kernel.query[i]!;
      // summed in f32: off by a few units in the last place of the sum of the magnitudes
      let magnitude = 0;
      for (let i = 0; i < dims; i++) magnitude += Math.abs(kernel.rows[r * dims + i]! * kernel.query[i]!);
      expect(Math.abs(dots[r]! - exact)).toBeLessThanOrEqual(magnitude * 2 ** -20);
    }
    expect(dots[0]!).toBeGreaterThan(16 * 32767 * 32767 * 0.99);
    expect(kernel.dots(0)).toHaveLength(0);
    expect(() => kernel.dots(rows + 1)).toThrow(RangeError);
  });

  it('is not made for vectors whose length is not a multiple of 16', () => {
    expect(DotKernel.create(100)).toBeUndefined();
    expect(DotKernel.create(0)).toBeUndefined();
    expect(DotKernel.create(512)?.capacity).toBe(256);
  });
});
