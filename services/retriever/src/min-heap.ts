/**
 * A min-heap of numbers laid in a typed array (`heap[0]` the least): the k best of a scan kept
 * without sorting them all.
 */

/** Puts `value` at `i` of the heap `heap[0..size)` and moves it down to its place. */
export function siftDown(heap: Float64Array, size: number, i: number, value: number): void {
  for (;;) {
    let child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && heap[child + 1]! < heap[child]!) child++;
    if (heap[child]! >= value) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = value;
}

/** Adds `value` to the heap `heap[0..size)` (room for it at `size`). */
export function siftUp(heap: Float64Array, size: number, value: number): void {
  let i = size;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= value) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = value;
}
