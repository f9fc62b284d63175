import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredItem } from '@askbus/contracts';
import { ItemBytes, journalSource } from './items';

const item = (n: number, extra = ''): StoredItem => ({
  url: `https://example.org/${n}`,
  name: `Item ${n}${extra}`,
  site: 'shop',
  '@type': 'Product',
  schema_object: { '@type': 'Product', name: `Item ${n}${extra}`, sku: `S-${n}` },
});

/** A segment file of these items' lines; each item's offset and length in it. */
function segment(path: string, items: StoredItem[]): Map<string, { off: number; len: number }> {
  const at = new Map<string, { off: number; len: number }>();
  const lines: string[] = [];
  let off = 0;
  for (const it of items) {
    const line = JSON.stringify(it);
    const len = Buffer.byteLength(line);
    at.set(it.url, { off, len });
    lines.push(`${line}\n`);
    off += len + 1;
  }
  writeFileSync(path, lines.join(''));
  return at;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('ItemBytes', () => {
  it('keeps items set in memory, by URL, past the first growth of its slots', () => {
    const bytes = new ItemBytes();
    const items = Array.from({ length: 3000 }, (_, n) => item(n));
    for (const it of items) bytes.set(it);
    expect(bytes.size).toBe(3000);
    expect(bytes.get(items[0]!.url)).toEqual(items[0]);
    expect(bytes.get(items[2999]!.url)).toEqual(items[2999]);
    expect(bytes.same(items[1234]!)).toBe(true);
    expect(bytes.same(item(1234, ' (new)'))).toBe(false);
    expect(bytes.location(items[5]!.url)).toBeUndefined();
  });

  it('gives a deleted item’s slot to the next and keeps every other item intact', () => {
    const bytes = new ItemBytes();
    for (let n = 0; n < 10; n++) bytes.set(item(n));
    expect(bytes.delete(item(3).url)).toBe(true);
    expect(bytes.delete(item(3).url)).toBe(false);
    bytes.set(item(100));
    expect(bytes.has(item(3).url)).toBe(false);
    expect(bytes.get(item(3).url)).toBeUndefined();
    expect(bytes.get(item(100).url)).toEqual(item(100));
    for (const n of [0, 1, 2, 4, 9]) expect(bytes.get(item(n).url)).toEqual(item(n));
    expect(bytes.size).toBe(10);
    expect([...bytes.values()].map((i) => i.url).sort()).toEqual(
      [0, 1, 2, 4, 5, 6, 7, 8, 9, 100].map((n) => item(n).url).sort(),
    );
  });

  it('reads lines of an attached segment, and again after the files are closed', () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-items-'));
    const items = [item(1), item(2, ' – ünïcode'), item(3)];
    const path = join(dir, 'seg-0');
    const at = segment(path, items);
    const bytes = new ItemBytes();
    bytes.attach(0, path);
    for (const it of items) bytes.setLine(it.url, 0, at.get(it.url)!.off, at.get(it.url)!.len);
    expect(bytes.get(items[1]!.url)).toEqual(items[1]);
    expect(bytes.location(items[2]!.url)).toEqual({ seg: 0, ...at.get(items[2]!.url)! });
    bytes.close();
    expect(bytes.get(items[2]!.url)).toEqual(items[2]);
  });

  it('keeps where each line is as its slots grow', () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-items-'));
    const items = Array.from({ length: 2500 }, (_, n) => item(n));
    const path = join(dir, 'seg-0');
    const at = segment(path, items);
    const bytes = new ItemBytes();
    bytes.attach(0, path);
    for (const it of items) bytes.setLine(it.url, 0, at.get(it.url)!.off, at.get(it.url)!.len);
    for (const n of [0, 1023, 1024, 2499]) expect(bytes.get(items[n]!.url)).toEqual(items[n]);
  });

  it('refuses a line outside its segment', () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-items-'));
    const path = join(dir, 'seg-0');
    const at = segment(path, [item(1)]);
    const bytes = new ItemBytes();
    bytes.attach(0, path);
    const { off, len } = at.get(item(1).url)!;
    expect(() => bytes.setLine(item(1).url, 0, off, len + 100)).toThrow(/not in segment 0/);
    expect(() => bytes.setLine(item(1).url, 7, off, len)).toThrow(/not in segment 7/);
    expect(bytes.has(item(1).url)).toBe(false);
  });

  it('moves placed items to the segment once it is written, and closes a segment no item is read from', () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-items-'));
    const old = [item(1), item(2)];
    const oldPath = join(dir, 'seg-0');
    const oldAt = segment(oldPath, old);
    const bytes = new ItemBytes();
    bytes.attach(0, oldPath);
    for (const it of old) bytes.setLine(it.url, 0, oldAt.get(it.url)!.off, oldAt.get(it.url)!.len);
    // both change: new bytes in memory, placed in segment 1 while it is being written
    const changed = [item(1, ' v2'), item(2, ' v2')];
    for (const it of changed) bytes.set(it);
    const newPath = join(dir, 'seg-1');
    // the segment's lines differ from the bytes in memory (same length): reads after settle show which is read
    const newAt = segment(
      newPath,
      changed.map((it) => ({ ...it, name: it.name.replace('v2', 'V2') })),
    );
    for (const it of changed) bytes.place(it.url, 1, newAt.get(it.url)!.off);
    expect(bytes.location(changed[0]!.url)).toEqual({ seg: 1, ...newAt.get(changed[0]!.url)! });
    bytes.settle(1, newPath);
    // segment 0 is closed and forgotten: its file may go, and the items come from segment 1
    rmSync(oldPath);
    for (const it of changed) expect(bytes.get(it.url)?.name).toBe(it.name.replace('v2', 'V2'));
    bytes.close();
    expect(bytes.get(changed[1]!.url)?.name).toBe('Item 2 V2');
  });

  it('forgets everything on clear', () => {
    const bytes = new ItemBytes();
    bytes.set(item(1));
    bytes.clear();
    expect(bytes.size).toBe(0);
    expect(bytes.get(item(1).url)).toBeUndefined();
    bytes.set(item(2));
    expect(bytes.get(item(2).url)).toEqual(item(2));
  });
  it("reads journaled items from their journal file, and keeps a snapshot's files readable until it lets go", () => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-items-'));
    const items = [item(1), item(2, ' “ünïcode”'), item(3)];
    const jsons = items.map((i) => JSON.stringify(i));
    // a journal line as Journal.appendUpsert writes it, and where each item lies in it
    const head = '{"op":"upsert","site":"shop","items":[';
    const journalPath = join(dir, 'journal-4.jsonl');
    writeFileSync(journalPath, `${head}${jsons.join(',')}]}\n`);
    const bytes = new ItemBytes();
    let at = Buffer.byteLength(head);
    items.forEach((it, n) => {
      const len = Buffer.byteLength(jsons[n]!);
      bytes.setJournaled(it.url, 4, journalPath, at, len);
      at += len + 1;
    });
    expect(bytes.ownBytes).toBe(0);
    expect(items.map((it) => bytes.get(it.url))).toEqual(items);
    expect(bytes.location(items[0]!.url)).toBeUndefined();

    // a snapshot captures where they are, then they move to the segment it writes
    const refs = items.map((it) => bytes.ref(it.url)!);
    expect(refs.every((r) => !Buffer.isBuffer(r) && r.src === journalSource(4))).toBe(true);
    const held = bytes.hold(refs);
    const segPath = join(dir, 'seg-7.jsonl');
    const lines = segment(segPath, items);
    for (const it of items) bytes.place(it.url, 7, lines.get(it.url)!.off);
    bytes.settle(7, segPath);
    rmSync(journalPath); // as the snapshot's commit removes the journal generations it holds
    // what the snapshot captured is still read, through the journal's open descriptor
    expect([...bytes.readAll(refs)].map((b) => b.toString('utf8'))).toEqual(jsons);
    // and out of order, with a buffer of its own between spans
    const own = Buffer.from('{"deleted":"x"}');
    expect([...bytes.readAll([refs[2]!, own, refs[0]!, refs[1]!])].map((b) => b.toString('utf8'))).toEqual([
      jsons[2],
      own.toString(),
      jsons[0],
      jsons[1],
    ]);
    bytes.release(held);
    // nothing needs the journal now: closed, and gone with its file
    expect(() => [...bytes.readAll(refs)]).toThrow(/journal generation 4 is not open/);
    expect(items.map((it) => bytes.get(it.url))).toEqual(items);
    expect(bytes.location(items[1]!.url)).toEqual({ seg: 7, ...lines.get(items[1]!.url)! });
    bytes.close();
  });
});
