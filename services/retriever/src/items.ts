import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { StoredItem } from '@askbus/contracts';
import { grownTo } from '@askbus/search-core';

/**
 * The stored items as bytes (their JSON, as a segment line holds it), decoded only when one is
 * asked for: a site of 300k items costs neither a graph of JS objects nor its JSON in memory.
 * An item written to a segment is read from that file when asked for (the page cache keeps
 * what is read often); an item upserted since is read from the journal line that holds it, and
 * only an item with neither (an in-memory store, a journal replayed on open) is a small buffer
 * of its own until its segment is written. Each item also knows where its line is on disk
 * (segment and offset), so the index can name every document's line and reopening needs no
 * segment parsed.
 */

/**
 * The files items are read from: segments by their id (0 and up), journal files by
 * `journalSource(generation)` (below -1; -1 is an item's own bytes).
 */
export const journalSource = (generation: number): number => -2 - generation;

/** A source's name in an error: the journal generation or the segment it is. */
const sourceName = (src: number): string => (src < -1 ? `journal generation ${-2 - src}` : `segment ${src}`);

/**
 * Where an item's JSON was when a snapshot was captured: its own bytes, or a span of a file
 * (which stays until that snapshot is written). Read with `ItemBytes.readAll`.
 */
export type ItemRef = Buffer | { readonly src: number; readonly at: number; readonly len: number };

/** Spans of one file closer than this are read in one call (a journal record's items are one apart). */
const RUN_GAP = 16;
const RUN_BYTES = 1 << 20;

/** Where an item's line is on disk. */
export interface ItemLocation {
  seg: number;
  off: number;
  len: number;
}

/**
 * Each item is a slot of typed arrays (where its bytes are read from, where its line is), found
 * by URL: no object per item (at 300k items, objects with their number fields boxed cost some
 * 40 MB and time to make on every open).
 */
export class ItemBytes {
  private readonly slots = new Map<string, number>();
  /** The JSON of items in no written segment yet, by slot. */
  private readonly own = new Map<number, Buffer>();
  /** The written segment an item is read from, and where (when it has no `own` bytes). */
  private src = new Int32Array(0);
  private at = new Float64Array(0);
  private len = new Uint32Array(0);
  /** The segment its line is in, or will be once the snapshot being written is (-1: none yet), and where. */
  private seg = new Int32Array(0);
  private off = new Float64Array(0);
  private free: number[] = [];
  private used = 0;
  /** Open segment files by id (a file removed after a merge stays readable until closed). */
  private readonly files = new Map<number, { fd: number; size: number }>();
  /** Each attached segment's path: a closed one is opened again when read (after `close`). */
  private readonly paths = new Map<number, string>();
  /**
   * Sources a captured snapshot will read its refs from (by how many snapshots): kept open even
   * when no item is read from them any more, until that snapshot is written (a journal file
   * removed meanwhile stays readable through its open descriptor).
   */
  private readonly held = new Map<number, number>();

  get size(): number {
    return this.slots.size;
  }

  has(url: string): boolean {
    return this.slots.has(url);
  }

  /** Room for `n` items in all (an open knows how many it reads). */
  reserve(n: number): void {
    if (n <= this.src.length) return;
    this.src = grownTo(this.src, n);
    this.at = grownTo(this.at, n);
    this.len = grownTo(this.len, n);
    this.seg = grownTo(this.seg, n);
    this.off = grownTo(this.off, n);
  }

  private slotOf(url: string): number {
    let s = this.slots.get(url);
    if (s === undefined) {
      s = this.free.pop() ?? this.used++;
      if (s >= this.src.length) this.reserve(Math.max(1024, Math.ceil(this.src.length * 1.5), s + 1));
      this.slots.set(url, s);
    }
    return s;
  }

  /** The item at `url`, decoded (a new object every call). */
  get(url: string): StoredItem | undefined {
    const bytes = this.bytes(url);
    return bytes ? (JSON.parse(bytes.toString('utf8')) as StoredItem) : undefined;
  }

  /** The item's JSON. */
  bytes(url: string): Buffer | undefined {
    const s = this.slots.get(url);
    if (s === undefined) return undefined;
    return this.own.get(s) ?? this.readSpan(this.src[s]!, this.at[s]!, this.len[s]!);
  }

  /** Where the item's JSON is now (see ItemRef). */
  ref(url: string): ItemRef | undefined {
    const s = this.slots.get(url);
    if (s === undefined) return undefined;
    return this.own.get(s) ?? { src: this.src[s]!, at: this.at[s]!, len: this.len[s]! };
  }

  /**
   * The JSON of each ref, in order. Spans that lie close together in one file (a journal
   * record's items, a segment's lines) are read in one call of up to RUN_BYTES.
   */
  *readAll(refs: Iterable<ItemRef>): Iterable<Buffer> {
    let run: { src: number; start: number; end: number; spans: Array<[number, number]> } | undefined;
    const flush = function* (this: ItemBytes): Iterable<Buffer> {
      if (!run) return;
      const { src, start, end, spans } = run;
      run = undefined;
      const buf = this.readSpan(src, start, end - start);
      for (const [at, len] of spans) yield buf.subarray(at - start, at - start + len);
    }.bind(this);
    for (const ref of refs) {
      if (Buffer.isBuffer(ref)) {
        yield* flush();
        yield ref;
        continue;
      }
      const { src, at, len } = ref;
      if (
        run &&
        (run.src !== src || at < run.end || at - run.end > RUN_GAP || at + len - run.start > RUN_BYTES)
      )
        yield* flush();
      if (run) {
        run.end = at + len;
        run.spans.push([at, len]);
      } else run = { src, start: at, end: at + len, spans: [[at, len]] };
    }
    yield* flush();
  }

  /** Bytes `at`…`at + len` of source `src` (a segment or a journal file). */
  private readSpan(src: number, at: number, len: number): Buffer {
    const path = this.paths.get(src);
    if (!this.files.has(src) && path) this.attach(src, path);
    const file = this.files.get(src);
    if (!file) throw new Error(`${sourceName(src)} is not open`);
    const out = Buffer.allocUnsafe(len);
    const n = readSync(file.fd, out, 0, len, at);
    if (n !== len) throw new Error(`${sourceName(src)} is shorter than its items`);
    return out;
  }

  /** Keeps the files `refs` lie in open until `release` (a snapshot reads them as it is written). */
  hold(refs: Iterable<ItemRef>): number[] {
    const sources = new Set<number>();
    for (const ref of refs) if (!Buffer.isBuffer(ref)) sources.add(ref.src);
    for (const src of sources) this.held.set(src, (this.held.get(src) ?? 0) + 1);
    return [...sources];
  }

  /** Lets go of what `hold` kept open, and closes the files nothing needs any more. */
  release(sources: readonly number[]): void {
    for (const src of sources) {
      const n = (this.held.get(src) ?? 0) - 1;
      if (n > 0) this.held.set(src, n);
      else this.held.delete(src);
    }
    this.closeUnused();
  }

  /** Bytes held in memory as items' own (items in no file yet). */
  get ownBytes(): number {
    let n = 0;
    for (const b of this.own.values()) n += b.length;
    return n;
  }

  /** Whether the item stored at `url` is this very item (same JSON). */
  same(item: StoredItem, json = JSON.stringify(item)): boolean {
    const s = this.slots.get(item.url);
    return (
      s !== undefined &&
      this.len[s] === Buffer.byteLength(json) &&
      this.bytes(item.url)!.toString('utf8') === json
    );
  }

  /** Stores an item not written to a segment yet. */
  set(item: StoredItem, json = JSON.stringify(item)): void {
    const own = Buffer.from(json);
    const s = this.slotOf(item.url);
    this.own.set(s, own);
    this.src[s] = -1;
    this.at[s] = 0;
    this.len[s] = own.length;
    this.seg[s] = -1;
    this.off[s] = -1;
  }

  /**
   * Stores an item whose JSON (`len` bytes) is at `at` in the journal file `path` (generation
   * `generation`), on disk already: nothing of it is held in memory.
   */
  setJournaled(url: string, generation: number, path: string, at: number, len: number): void {
    const src = journalSource(generation);
    if (!this.files.has(src)) this.attach(src, path);
    const s = this.slotOf(url);
    this.own.delete(s);
    this.src[s] = src;
    this.at[s] = at;
    this.len[s] = len;
    this.seg[s] = -1;
    this.off[s] = -1;
  }

  /** Opens segment `seg` (at `path`) for reading its items; its size. */
  attach(seg: number, path: string): number {
    const open = this.files.get(seg);
    if (open) return open.size;
    const fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    this.files.set(seg, { fd, size });
    this.paths.set(seg, path);
    return size;
  }

  /** Stores an item that is line `off`…`off + len` of segment `seg` (attached). */
  setLine(url: string, seg: number, off: number, len: number): void {
    const file = this.files.get(seg);
    if (!file || !(off >= 0 && len > 0 && off + len <= file.size))
      throw new Error(`${url} is not in segment ${seg}`);
    const s = this.slotOf(url);
    this.own.delete(s);
    this.src[s] = seg;
    this.at[s] = off;
    this.len[s] = len;
    this.seg[s] = seg;
    this.off[s] = off;
  }

  clear(): void {
    this.slots.clear();
    this.own.clear();
    this.free = [];
    this.used = 0;
    this.close();
    this.paths.clear();
  }

  delete(url: string): boolean {
    const s = this.slots.get(url);
    if (s === undefined) return false;
    this.slots.delete(url);
    this.own.delete(s);
    this.free.push(s);
    return true;
  }

  /** Where the item's line is on disk (undefined: not written yet, or no such item). */
  location(url: string): ItemLocation | undefined {
    const s = this.slots.get(url);
    return s !== undefined && this.seg[s]! >= 0
      ? { seg: this.seg[s]!, off: this.off[s]!, len: this.len[s]! }
      : undefined;
  }

  /** Records that the item's line will be at `off` in segment `seg` (being written). */
  place(url: string, seg: number, off: number): void {
    const s = this.slots.get(url);
    if (s !== undefined) {
      this.seg[s] = seg;
      this.off[s] = off;
    }
  }

  /**
   * Segment `seg` is written at `path`: the items placed in it are read from it from now on
   * (their own bytes freed), and segments no item is read from any more are closed.
   */
  settle(seg: number, path: string): void {
    this.attach(seg, path);
    for (const s of this.slots.values()) {
      if (this.seg[s] === seg) {
        this.own.delete(s);
        this.src[s] = seg;
        this.at[s] = this.off[s]!;
      }
    }
    this.closeUnused();
  }

  /** Closes the files (segments, journal files) no item is read from and no snapshot holds. */
  private closeUnused(): void {
    const used = new Set<number>(this.held.keys());
    for (const s of this.slots.values()) if (!this.own.has(s)) used.add(this.src[s]!);
    for (const [id, file] of this.files) {
      if (used.has(id)) continue;
      closeSync(file.fd);
      this.files.delete(id);
      this.paths.delete(id);
    }
  }

  /** Closes the segment files (the store is closing). */
  close(): void {
    for (const file of this.files.values()) closeSync(file.fd);
    this.files.clear();
  }

  urls(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** Every item, decoded one at a time. */
  *values(): IterableIterator<StoredItem> {
    for (const url of this.slots.keys()) yield this.get(url)!;
  }
}
