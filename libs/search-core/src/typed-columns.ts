/** The typed arrays a column of numbers is kept in. */
export type TypedColumn = Int32Array | Uint32Array | Float32Array | Float64Array;

/**
 * `column` copied into a new array of `length` entries of the same type (the rest zero): typed
 * columns grow by replacing, so callers grow them by a good part at a time, not one slot.
 */
export function grownTo<T extends TypedColumn>(column: T, length: number): T {
  const next = new (column.constructor as new (n: number) => T)(length);
  next.set(column);
  return next;
}
