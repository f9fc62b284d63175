import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { z } from 'zod';
import { StoredItem } from '@askbus/contracts';

/**
 * The embedded store's files: items in append-only segments, and a manifest that commits them.
 *
 * A snapshot writes one new segment with only what changed since the one before (the items
 * upserted, the URLs deleted), as JSON lines, so a load of a hundred items into a store of
 * 300k writes a hundred lines, not the whole store; and no file is ever one JSON string
 * (items.json of 300k items was near V8's string limit). Later segments win. When the segments
 * hold far more lines than there are items, one segment of every item replaces them all.
 *
 * Beside them, the derived indexes (keyword postings, vector graph and codes, document numbers)
 * are written under a generation's name and named by the manifest with the last segment they
 * include; segments after it are indexed again on open, so the indexes need not be written at
 * every snapshot either (see IndexStore.persist).
 */

export const INDEX_FORMAT = 2;
export const MANIFEST_FILE = 'manifest.json';

export const SegmentInfo = z.object({
  id: z.number().int().nonnegative(),
  /** Lines in the file (items and deletions). */
  records: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
});
export type SegmentInfo = z.infer<typeof SegmentInfo>;

/**
 * The index files' own layout: 3 added the fact columns and the catalog (profiles, names,
 * vocabulary), so reopening reads them instead of analysing every item again; 4 saves the names
 * as a binary section of columns (document numbers, not URLs) instead of JSON; 5 saves each fact
 * column sorted, with its documents' order by first number; 6: the same layout, its profiles and
 * columns made by facts that take a price's currency from `priceCurrency` and read food energy
 * ("350 calories"), which those of 5 lack. Index files of
 * another layout (or none given: older ones) are rebuilt from the segments, never misread.
 * Since 6 the facts' own version is noted beside the layout (`facts`), so a change to what the
 * extractor reads rebuilds the files without a new layout number.
 */
export const INDEX_FILES_FORMAT = 6;

export const IndexFiles = z.object({
  generation: z.number().int().nonnegative(),
  /** INDEX_FILES_FORMAT of the files (absent: before 3). */
  format: z.number().int().optional(),
  /** The last segment the indexes include. */
  throughSegment: z.number().int(),
  analyzer: z.number().int(),
  /** FACTS_VERSION of the profiles and fact columns (absent: before it was noted, 2 or older). */
  facts: z.number().int().optional(),
  /** The embedder of the vectors (absent: keyword only). */
  embedder: z.string().optional(),
  dimensions: z.number().int().optional(),
});
export type IndexFiles = z.infer<typeof IndexFiles>;

export const Manifest = z.object({
  format: z.literal(INDEX_FORMAT),
  /** The last journal generation the segments include. */
  journal: z.number().int().nonnegative(),
  segments: z.array(SegmentInfo),
  index: IndexFiles.optional(),
});
export type Manifest = z.infer<typeof Manifest>;

export const segmentFile = (id: number): string => `segment-${id}.jsonl`;
export const docsFile = (generation: number): string => `docs-${generation}.json`;
export const keywordFile = (generation: number): string => `keyword-${generation}.bin`;
export const graphFile = (generation: number): string => `vectors-${generation}.usearch`;
export const codesFile = (generation: number): string => `vectors-${generation}.bin`;

/** Files of this layout, with the generation or segment id they carry. */
export const LAYOUT_FILE = /^(?:segment-(\d+)\.jsonl|(?:docs|keyword|vectors)-(\d+)\.(?:json|bin|usearch))$/;

const SECTIONS_MAGIC = 0x58494241; // 'ABIX'

/**
 * Byte sections in one file (the keyword file holds the postings, the fact columns, the
 * catalog and the names): a magic number, the count, each length, then the sections; as
 * chunks (a section may come in parts), so nothing is copied into one buffer to write it.
 */
export function packSections(sections: readonly (Buffer | readonly Buffer[])[]): Buffer[] {
  const head = Buffer.alloc(8 + 8 * sections.length);
  head.writeUInt32LE(SECTIONS_MAGIC, 0);
  head.writeUInt32LE(sections.length, 4);
  const parts = sections.map((s) => (Buffer.isBuffer(s) ? [s] : s));
  parts.forEach((p, i) => head.writeBigUInt64LE(BigInt(p.reduce((n, b) => n + b.length, 0)), 8 + 8 * i));
  return [head, ...parts.flat()];
}

/** The sections `packSections` wrote (views into `buf`); throws on anything else. */
export function unpackSections(buf: Buffer, count: number): Buffer[] {
  if (buf.length < 8 || buf.readUInt32LE(0) !== SECTIONS_MAGIC || buf.readUInt32LE(4) !== count)
    throw new Error('not a sectioned index file');
  let at = 8 + 8 * count;
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const n = Number(buf.readBigUInt64LE(8 + 8 * i));
    if (at + n > buf.length) throw new Error('the index file is truncated');
    out.push(buf.subarray(at, at + n));
    at += n;
  }
  if (at !== buf.length) throw new Error('the index file is damaged');
  return out;
}

/** One line of a segment: an item, or a URL that no longer has one. */
const DeletedRecord = z.object({ deleted: z.string() });
export type SegmentRecord = StoredItem | { deleted: string };

/**
 * Writes a file so readers see the old or the new content, never half of it; the content is on
 * disk before the rename, so a power loss cannot leave the new name on an empty file.
 * Content given as chunks is written chunk by chunk (no one string of it all).
 */
export async function writeFileAtomic(
  path: string,
  content: string | Buffer | Iterable<string | Buffer>,
): Promise<number> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let bytes = 0;
  try {
    const handle = await open(tmp, 'w');
    try {
      const chunks = typeof content === 'string' || Buffer.isBuffer(content) ? [content] : content;
      for (const chunk of chunks) {
        const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        await handle.write(buf);
        bytes += buf.length;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return bytes;
}

/** A segment's lines in chunks of about a megabyte. */
export function* segmentChunks(records: Iterable<SegmentRecord>): Iterable<string> {
  let chunk = '';
  for (const r of records) {
    chunk += `${JSON.stringify(r)}\n`;
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Lines of JSON (each without its newline) in chunks of about a megabyte: a segment's bytes. */
export function* lineChunks(lines: Iterable<Buffer>): Iterable<Buffer> {
  let parts: Buffer[] = [];
  let size = 0;
  for (const line of lines) {
    parts.push(line, NEWLINE);
    size += line.length + 1;
    if (size > 1 << 20) {
      yield Buffer.concat(parts, size);
      parts = [];
      size = 0;
    }
  }
  if (size) yield Buffer.concat(parts, size);
}
const NEWLINE = Buffer.from('\n');

/**
 * A whole file in one read call of its size: `readFile` reads a large file 512 KiB at a time,
 * one thread-pool round trip each (2.6 s of a 300k-item index's 12 s reopen was that waiting).
 */
export async function readWhole(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const out = Buffer.allocUnsafeSlow(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await handle.read(out, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === size ? out : out.subarray(0, at);
  } finally {
    await handle.close();
  }
}

/** A segment's bytes, checked against the length the manifest gives. */
export async function readSegmentBytes(path: string, expectedBytes: number): Promise<Buffer> {
  const data = await readWhole(path);
  if (data.length !== expectedBytes)
    throw new Error(`${path} has ${data.length} bytes, the manifest says ${expectedBytes}`);
  return data;
}

/**
 * A segment's records, each with where its line is (start, end: without the newline); any bad
 * line is an error (segments are written whole).
 */
export function parseSegment(
  path: string,
  data: Buffer,
  onRecord: (record: SegmentRecord, start: number, end: number) => void,
): number {
  let start = 0;
  let records = 0;
  for (let line = 1; start < data.length; line++) {
    let end = data.indexOf(0x0a, start);
    if (end === -1) end = data.length;
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString('utf8', start, end));
    } catch {
      throw new Error(`${path} line ${line} is not JSON`);
    }
    const deleted = DeletedRecord.safeParse(raw);
    if (deleted.success) onRecord(deleted.data, start, end);
    else {
      const item = StoredItem.safeParse(raw);
      if (!item.success)
        throw new Error(`${path} line ${line} is not an item: ${item.error.issues[0]?.message ?? ''}`);
      onRecord(item.data, start, end);
    }
    records++;
    start = end + 1;
  }
  return records;
}

/** Reads a segment written by `segmentChunks` or `lineChunks`; any bad line is an error (segments are written whole). */
export async function readSegment(
  path: string,
  expectedBytes: number,
  onRecord: (record: SegmentRecord, start: number, end: number) => void,
): Promise<number> {
  return parseSegment(path, await readSegmentBytes(path, expectedBytes), onRecord);
}
