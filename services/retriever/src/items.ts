import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { StoredItem } from '@askbus/contracts';
import { grownTo } from '@askbus/search-core';

/**
 * The stored items as bytes (their JSON, as a segment line holds it), decoded only when one is
 * asked for: a site of 300k items costs neither a graph of JS objects nor its JSON in memory.
 * An item written to a segment is read from that file when asked for (the page cache keeps
 * what is read often); an item upserted since is a small buffer of its own until its segment
 * is written. Each item also knows where its line is on disk (segment and offset), so the
 * index can name every document's line and reopening needs no segment parsed.
 */

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
    const own = this.own.get(s);
    if (own) return own;
    const src = this.src[s]!;
    const len = this.len[s]!;
    const path = this.paths.get(src);
    if (!this.files.has(src) && path) this.attach(src, path);
    const file = this.files.get(src);
    if (!file) throw new Error(`segment ${src} is not open`);
    const out = Buffer.allocUnsafe(len);
    const n = readSync(file.fd, out, 0, len, this.at[s]!);
    if (n !== len) throw new Error(`segment ${src} is shorter than its items`);
    return out;
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
    const used = new Set<number>();
    for (const s of this.slots.values()) {
      if (this.seg[s] === seg) {
        this.own.delete(s);
        this.src[s] = seg;
        this.at[s] = this.off[s]!;
      }
      if (!this.own.has(s)) used.add(this.src[s]!);
    }
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
