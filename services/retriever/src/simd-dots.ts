/**
 * Dot products of 16-bit codes with a 16-bit query, 16 entries at a time in WebAssembly SIMD
 * (`simd-dots.wat`): the exact scan's inner loop. In JavaScript each multiply-add of that loop
 * costs about 3 ns; the scan of a 34k-vector site with a 127-entry query took 13 ms at 300k items.
 *
 * WebAssembly reads only its own memory, so the rows to scan are copied into a scratch area of
 * it a batch at a time (a batch small enough to stay in the cache while it is read again).
 */

/** `simd-dots.wat` assembled (`simd-dots.test.ts` assembles the text again and compares). */
export const SIMD_DOTS_WASM = Buffer.from(
  'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcRAgZtZW1vcnkCAARkb3RzAAAK1QEB0gECBH8CeyAAIQUgACABIAJsQQF0aiEIAkADQCAFIAhPDQEgBSACQQF0aiEHIAMhBv0MAAAAAAAAAAAAAAAAAAAAACEJ/QwAAAAAAAAAAAAAAAAAAAAAIQoDQCAJIAX9AAQAIAb9AAQA/boB/foB/eQBIQkgCiAF/QAEECAG/QAEEP26Af36Af3kASEKIAVBIGohBSAGQSBqIQYgBSAHSQ0ACyAJIAr95AEhCSAEIAn9HwAgCf0fAZIgCf0fAiAJ/R8DkpI4AgAgBEEEaiEEDAALCws=',
  'base64',
);

/** Bytes of codes in one batch: small enough to be read again from the cache. */
const BATCH_BYTES = 256 * 1024;
const PAGE = 65_536;

type DotsFn = (codes: number, rows: number, dims: number, query: number, out: number) => void;

/** What is used of the WebAssembly API (TypeScript declares it only in the DOM's types). */
interface WasmModule {
  readonly kind?: 'module';
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule) => { readonly exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: WasmModule | null | undefined;
function wasmModule(): WasmModule | undefined {
  // null: this runtime has no WebAssembly SIMD (the caller scans in JavaScript)
  if (compiled === undefined)
    compiled = wasm?.validate(SIMD_DOTS_WASM) ? new wasm.Module(SIMD_DOTS_WASM) : null;
  return compiled ?? undefined;
}

/** One scratch area and the kernel over it, for vectors of one length. */
export class DotKernel {
  /** Rows in one batch. */
  readonly capacity: number;
  /** The batch's codes, row after row: copy rows here, then call `dots`. */
  readonly rows: Int16Array;
  /** The query's codes. */
  readonly query: Int16Array;
  private readonly out: Float32Array;
  private readonly fn: DotsFn;
  private readonly queryAt: number;
  private readonly outAt: number;

  /** A kernel for vectors of `dims` entries, or undefined where it cannot run (no SIMD, or `dims` not a multiple of 16). */
  static create(dims: number): DotKernel | undefined {
    if (dims <= 0 || dims % 16 !== 0) return undefined;
    const mod = wasmModule();
    return mod ? new DotKernel(mod, dims) : undefined;
  }

  private constructor(
    mod: WasmModule,
    readonly dims: number,
  ) {
    this.capacity = Math.max(16, Math.floor(BATCH_BYTES / (2 * dims)));
    const instance = new wasm!.Instance(mod);
    const memory = instance.exports.memory as WasmMemory;
    this.fn = instance.exports.dots as DotsFn;
    this.queryAt = this.capacity * dims * 2;
    this.outAt = this.queryAt + dims * 2;
    const bytes = this.outAt + this.capacity * 4;
    const pages = Math.ceil(bytes / PAGE);
    // grown once, here: growing detaches the views below
    if (pages > memory.buffer.byteLength / PAGE) memory.grow(pages - memory.buffer.byteLength / PAGE);
    this.rows = new Int16Array(memory.buffer, 0, this.capacity * dims);
    this.query = new Int16Array(memory.buffer, this.queryAt, dims);
    this.out = new Float32Array(memory.buffer, this.outAt, this.capacity);
  }

  /** The dot products of the first `count` rows with the query (a view, valid until the next call). */
  dots(count: number): Float32Array {
    if (count > this.capacity) throw new RangeError(`${count} rows for a batch of ${this.capacity}`);
    this.fn(0, count, this.dims, this.queryAt, this.outAt);
    return this.out.subarray(0, count);
  }
}
