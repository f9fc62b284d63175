import { describe, expect, it } from 'vitest';
import { grownTo } from './typed-columns';

describe('grownTo', () => {
  it('keeps the type and the values, and zeroes the new slots', () => {
    const grown = grownTo(Float64Array.from([1.5, NaN]), 4);
    expect(grown).toBeInstanceOf(Float64Array);
    expect([...grown]).toEqual([1.5, NaN, 0, 0]);
    const ints = grownTo(Int32Array.from([-3]), 2);
    expect(ints).toBeInstanceOf(Int32Array);
    expect([...ints]).toEqual([-3, 0]);
  });

  it('leaves the original as it was', () => {
    const old = Uint32Array.from([7]);
    grownTo(old, 3)[0] = 9;
    expect([...old]).toEqual([7]);
  });
});
