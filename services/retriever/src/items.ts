import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { StoredItem } from '@askbus/contracts';

/**
 * The stored items as bytes (their JSON, as a segment line holds it), decoded only when one is
 * asked for: a site of 300k items costs neither a graph of JS objects nor its JSON in memory.
 * An item written to a segment is read from that file when asked for (the page cache keeps
 * what is read often); an item upserted since is a small buffer of its own until its segment
 * is written. Each item also knows where its line is on disk (segment and offset), so the
 * index can name every document's line and reopening needs no segment parsed.
 */

interface Entry {
  /** The item's JSON while it is in no written segment. */
  own: Buffer | undefined;
  /** The written segment it is read from, and where (when `own` is undefined). */
  src: number;
  at: number;
  len: number;
  /** The segment its line is in, or will be once the snapshot being written is (-1: none yet), and where. */
  seg: number;
  off: number;
}

/** Where an item's line is on disk. */
export interface ItemLocation {
  seg: number;
  off: number;
  len: number;
}

export class ItemBytes {
  private readonly entries = new Map<string, Entry>();
  /** Open segment files by id (a file removed after a merge stays readable until closed). */
  private readonly files = new Map<number, { fd: number; size: number }>();
  /** Each attached segment's path: a closed one is opened again when read (after `close`). */
  private readonly paths = new Map<number, string>();

  get size(): number {
    return this.entries.size;
  }

  has(url: string): boolean {
    return this.entries.has(url);
  }

  /** The item at `url`, decoded (a new object every call). */
  get(url: string): StoredItem | undefined {
    const bytes = this.bytes(url);
    return bytes ? (JSON.parse(bytes.toString('utf8')) as StoredItem) : undefined;
  }

  /** The item's JSON. */
  bytes(url: string): Buffer | undefined {
    const e = this.entries.get(url);
    if (!e) return undefined;
    if (e.own) return e.own;
    const path = this.paths.get(e.src);
    if (!this.files.has(e.src) && path) this.attach(e.src, path);
    const file = this.files.get(e.src);
    if (!file) throw new Error(`segment ${e.src} is not open`);
    const out = Buffer.allocUnsafe(e.len);
    const n = readSync(file.fd, out, 0, e.len, e.at);
    if (n !== e.len) throw new Error(`segment ${e.src} is shorter than its items`);
    return out;
  }

  /** Whether the item stored at `url` is this very item (same JSON). */
  same(item: StoredItem, json = JSON.stringify(item)): boolean {
    const e = this.entries.get(item.url);
    return !!e && e.len === Buffer.byteLength(json) && this.bytes(item.url)!.toString('utf8') === json;
  }

  /** Stores an item not written to a segment yet. */
  set(item: StoredItem, json = JSON.stringify(item)): void {
    const own = Buffer.from(json);
    this.entries.set(item.url, { own, src: -1, at: 0, len: own.length, seg: -1, off: -1 });
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
    this.entries.set(url, { own: undefined, src: seg, at: off, len, seg, off });
  }

  clear(): void {
    this.entries.clear();
    this.close();
    this.paths.clear();
  }

  delete(url: string): boolean {
    return this.entries.delete(url);
  }

  /** Where the item's line is on disk (undefined: not written yet, or no such item). */
  location(url: string): ItemLocation | undefined {
    const e = this.entries.get(url);
    return e && e.seg >= 0 ? { seg: e.seg, off: e.off, len: e.len } : undefined;
  }

  /** Records that the item's line will be at `off` in segment `seg` (being written). */
  place(url: string, seg: number, off: number): void {
    const e = this.entries.get(url);
    if (e) {
      e.seg = seg;
      e.off = off;
    }
  }

  /**
   * Segment `seg` is written at `path`: the items placed in it are read from it from now on
   * (their own bytes freed), and segments no item is read from any more are closed.
   */
  settle(seg: number, path: string): void {
    this.attach(seg, path);
    const used = new Set<number>();
    for (const e of this.entries.values()) {
      if (e.seg === seg) {
        e.own = undefined;
        e.src = seg;
        e.at = e.off;
      }
      if (!e.own) used.add(e.src);
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
    return this.entries.keys();
  }

  /** Every item, decoded one at a time. */
  *values(): IterableIterator<StoredItem> {
    for (const url of this.entries.keys()) yield this.get(url)!;
  }
}
