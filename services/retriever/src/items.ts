import type { StoredItem } from '@askbus/contracts';

/**
 * The stored items as bytes (their JSON, as a segment line holds it), decoded only when one is
 * asked for: a site of 300k items costs its JSON, not a graph of JS objects. Items read from a
 * segment are views into that segment's one buffer; items upserted since are small buffers of
 * their own. Each item also knows where it is on disk (segment and offset), once it is there,
 * so the index can name every document's line and reopening needs no segment parsed.
 */

interface Entry {
  /** The memory holding the item's JSON, and where in it. */
  buf: Buffer;
  at: number;
  len: number;
  /** The segment holding its line and the line's offset (-1: not written yet). */
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

  get size(): number {
    return this.entries.size;
  }

  has(url: string): boolean {
    return this.entries.has(url);
  }

  /** The item at `url`, decoded (a new object every call). */
  get(url: string): StoredItem | undefined {
    const e = this.entries.get(url);
    return e ? (JSON.parse(e.buf.toString('utf8', e.at, e.at + e.len)) as StoredItem) : undefined;
  }

  /** The item's JSON. */
  bytes(url: string): Buffer | undefined {
    const e = this.entries.get(url);
    return e?.buf.subarray(e.at, e.at + e.len);
  }

  /** Whether the item stored at `url` is this very item (same JSON). */
  same(item: StoredItem, json = JSON.stringify(item)): boolean {
    const e = this.entries.get(item.url);
    return !!e && e.len === Buffer.byteLength(json) && e.buf.toString('utf8', e.at, e.at + e.len) === json;
  }

  /** Stores an item not written to a segment yet. */
  set(item: StoredItem, json = JSON.stringify(item)): void {
    const buf = Buffer.from(json);
    this.entries.set(item.url, { buf, at: 0, len: buf.length, seg: -1, off: -1 });
  }

  /** Stores an item that is line `off`…`off + len` of segment `seg`, whose bytes are `data`. */
  setLine(url: string, data: Buffer, seg: number, off: number, len: number): void {
    this.entries.set(url, { buf: data, at: off, len, seg, off });
  }

  clear(): void {
    this.entries.clear();
  }

  delete(url: string): boolean {
    return this.entries.delete(url);
  }

  /** Where the item's line is on disk (undefined: not written yet, or no such item). */
  location(url: string): ItemLocation | undefined {
    const e = this.entries.get(url);
    return e && e.seg >= 0 ? { seg: e.seg, off: e.off, len: e.len } : undefined;
  }

  /** Records that the item's line is now at `off` in segment `seg`. */
  place(url: string, seg: number, off: number): void {
    const e = this.entries.get(url);
    if (e) {
      e.seg = seg;
      e.off = off;
    }
  }

  urls(): IterableIterator<string> {
    return this.entries.keys();
  }

  /** Every item, decoded one at a time. */
  *values(): IterableIterator<StoredItem> {
    for (const url of this.entries.keys()) yield this.get(url)!;
  }
}
