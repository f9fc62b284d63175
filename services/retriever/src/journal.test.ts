import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredItem } from '@askbus/contracts';
import { IndexStore } from './index-store';
import { Journal, parseJournal } from './journal';

const item = (site: string, n: number, name = `Gadget ${n}`): StoredItem => ({
  url: `https://${site}.example/${n}`,
  name,
  site,
  '@type': 'Thing',
  schema_object: { '@type': 'Thing', name },
});
const range = (site: string, from: number, to: number): StoredItem[] =>
  Array.from({ length: to - from }, (_, i) => item(site, from + i));

const opened: IndexStore[] = [];
/** Keyword only: these tests are about what survives on disk, not about vectors. Never closed before
 * the next open (as if killed); closed after each test only to free the file handles. */
async function openStore(dir: string, snapshotAfterBytes?: number): Promise<IndexStore> {
  const store = await IndexStore.open({
    dataDir: dir,
    embedder: null,
    ...(snapshotAfterBytes ? { snapshotAfterBytes } : {}),
  });
  opened.push(store);
  return store;
}
const journalFiles = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('journal-'));

describe('IndexStore journal', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'askbus-journal-'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays acknowledged upserts and deletes that no snapshot holds, on top of the last snapshot', async () => {
    const first = await openStore(dir);
    await first.upsert('a', range('a', 0, 10));
    await first.persist(); // snapshot: a/0..9
    await first.upsert('a', [item('a', 3, 'Renamed widget')]);
    await first.upsert('b', range('b', 0, 5));
    await first.upsert('c', range('c', 0, 2));
    expect(await first.deleteSite('c')).toBe(2);
    // no persist, no close: as if the process were killed here

    const second = await openStore(dir);
    expect(second.replayed).toEqual({ records: 4, tornBytes: 0 });
    expect(second.sites()).toEqual([
      { name: 'a', itemCount: 10, types: ['Thing'] },
      { name: 'b', itemCount: 5, types: ['Thing'] },
    ]);
    expect(second.get('https://a.example/3')!.name).toBe('Renamed widget');
    expect((await second.search({ query: 'widget', site: ['a'] })).map((r) => r.url)).toEqual([
      'https://a.example/3',
    ]);
    // replaying twice (a third open) changes nothing: upserts are by URL
    expect((await openStore(dir)).sites()).toEqual(second.sites());
  });

  it('ignores and cuts off a torn last line (a crash mid-write), then journals on cleanly', async () => {
    const first = await openStore(dir);
    await first.upsert('a', range('a', 0, 3));
    const [file] = journalFiles(dir);
    const journal = join(dir, file!);
    const good = statSync(journal).size;
    // the start of a record whose write never finished: no closing brace, no newline
    appendFileSync(journal, '{"op":"upsert","site":"a","items":[{"url":"https://a.example/99","na');

    const second = await openStore(dir);
    expect(second.replayed.records).toBe(1);
    expect(second.replayed.tornBytes).toBeGreaterThan(0);
    expect(second.size).toBe(3);
    expect(second.get('https://a.example/99')).toBeUndefined();
    expect(statSync(journal).size).toBe(good); // cut off, so the next record starts on a fresh line

    await second.upsert('a', [item('a', 3)]);
    const third = await openStore(dir);
    expect(third.replayed).toEqual({ records: 2, tornBytes: 0 });
    expect(third.size).toBe(4);
  });

  it('treats a complete but garbled last line as torn too', async () => {
    const first = await openStore(dir);
    await first.upsert('a', range('a', 0, 2));
    appendFileSync(join(dir, journalFiles(dir)[0]!), '\u0000\u0000\u0000\n');
    const second = await openStore(dir);
    expect(second.size).toBe(2);
    expect(second.replayed.tornBytes).toBe(4);
  });

  it('refuses to start when a damaged line has good lines after it', async () => {
    const first = await openStore(dir);
    await first.upsert('a', range('a', 0, 2));
    const journal = join(dir, journalFiles(dir)[0]!);
    appendFileSync(journal, 'garbage\n');
    appendFileSync(journal, `${JSON.stringify({ op: 'upsert', site: 'a', items: [item('a', 5)] })}\n`);
    await expect(openStore(dir)).rejects.toThrow(/journal-1\.jsonl is damaged at line 2/);
  });

  it('skips and removes journal files a snapshot already holds (a crash between snapshot and removal)', async () => {
    const first = await openStore(dir);
    await first.upsert('a', range('a', 0, 5));
    const stale = join(dir, 'stale.copy');
    copyFileSync(join(dir, 'journal-1.jsonl'), stale);
    await first.persist(); // the manifest now names generation 1 as included; journal-1 is removed
    expect(journalFiles(dir)).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))).toMatchObject({ journal: 1 });
    await first.deleteSite('a');
    await first.upsert('b', [item('b', 1)]); // journal-2: delete a, upsert b
    copyFileSync(stale, join(dir, 'journal-1.jsonl')); // as if the removal never happened

    const second = await openStore(dir);
    expect(second.replayed.records).toBe(2); // journal-2 only
    expect(second.sites()).toEqual([{ name: 'b', itemCount: 1, types: ['Thing'] }]);
    expect(journalFiles(dir)).toEqual(['journal-2.jsonl']);
  });

  it('writes a snapshot by itself once the journal grows large, and opens from it', async () => {
    const store = await openStore(dir, 2_000);
    for (let i = 0; i < 20; i++) await store.upsert('a', range('a', i * 5, i * 5 + 5));
    await store.persist(); // waits for any background snapshot too
    const saved = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { journal: number };
    expect(saved.journal).toBeGreaterThan(1); // more than the one persist above
    const again = await openStore(dir);
    expect(again.openedFrom).toBe('disk');
    expect(again.replayed.records).toBe(0);
    expect(again.size).toBe(100);
  });

  it('journals an upsert as the line append would write, and says where each item lies in it', async () => {
    const { journal } = await Journal.open(dir, 0, async () => {});
    await journal.append({ op: 'deleteSite', site: 'z' });
    const items = [item('a', 1), item('a', 2, 'Gädget “two” ✓'), item('a', 3)];
    const at = await journal.appendUpsert(
      'a',
      items.map((i) => JSON.stringify(i)),
    );
    await journal.close();
    expect(at.generation).toBe(journal.generation);
    const data = readFileSync(at.path);
    expect(data.toString('utf8')).toBe(
      `${JSON.stringify({ op: 'deleteSite', site: 'z' })}\n${JSON.stringify({ op: 'upsert', site: 'a', items })}\n`,
    );
    expect(parseJournal(data, at.path).records[1]).toEqual({ op: 'upsert', site: 'a', items });
    items.forEach((it, n) =>
      expect(data.subarray(at.at[n]!, at.at[n]! + at.lengths[n]!).toString('utf8')).toBe(JSON.stringify(it)),
    );
  });

  it('reads the items it journaled from the journal, holding none of their bytes, through snapshots and a reopen', async () => {
    const store = await openStore(dir, 2_000);
    for (let i = 0; i < 20; i++) await store.upsert('a', range('a', i * 5, i * 5 + 5));
    await store.upsert('a', [item('a', 3, 'Gadget three, renamed')]);
    expect(store.heldItemBytes).toBe(0);
    const check = (s: IndexStore) => {
      expect(s.size).toBe(100);
      expect(s.get(item('a', 3).url)?.name).toBe('Gadget three, renamed');
      for (const n of [0, 4, 50, 99]) expect(s.get(item('a', n).url)).toEqual(item('a', n));
    };
    check(store);
    await store.persist(); // waits for the background snapshots too
    expect(journalFiles(dir).length).toBeLessThanOrEqual(1);
    check(store);
    await store.upsert('a', [item('a', 50, 'Gadget fifty, renamed')]);
    expect(store.get(item('a', 50).url)?.name).toBe('Gadget fifty, renamed');
    const again = await openStore(dir);
    expect(again.get(item('a', 50).url)?.name).toBe('Gadget fifty, renamed');
    expect(again.get(item('a', 3).url)?.name).toBe('Gadget three, renamed');
    expect(again.size).toBe(100);
  });

  it('parses a journal buffer: records, good bytes, torn tail', () => {
    const line = `${JSON.stringify({ op: 'deleteSite', site: 'x' })}\n`;
    expect(parseJournal(Buffer.from(line + line), 'j')).toMatchObject({
      validBytes: line.length * 2,
      totalBytes: line.length * 2,
    });
    const torn = parseJournal(Buffer.from(`${line}{"op":"dele`), 'j');
    expect(torn.records).toEqual([{ op: 'deleteSite', site: 'x' }]);
    expect(torn.validBytes).toBe(line.length);
    expect(parseJournal(Buffer.alloc(0), 'j')).toEqual({ records: [], validBytes: 0, totalBytes: 0 });
  });
});
