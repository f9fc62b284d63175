import { open, readdir, readFile, rm, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { StoredItem } from '@askbus/contracts';

/** One acknowledged change to the store, as one JSON line of the journal. */
export const JournalRecord = z.discriminatedUnion('op', [
  z.object({ op: z.literal('upsert'), site: z.string(), items: z.array(StoredItem) }),
  z.object({ op: z.literal('deleteSite'), site: z.string() }),
]);
export type JournalRecord = z.infer<typeof JournalRecord>;

const FILE_PATTERN = /^journal-(\d+)\.jsonl$/;
const fileName = (generation: number): string => `journal-${generation}.jsonl`;

/** Where an upsert's items lie in the journal: the file, and each item's offset and length in it. */
export interface JournaledItems {
  generation: number;
  path: string;
  at: number[];
  lengths: number[];
}

/** What `Journal.open` found besides the records it replayed. */
export interface JournalReplay {
  records: number;
  /** Bytes of a torn last line (a crash mid-write) that were cut off; 0 when none. */
  tornBytes: number;
}

/**
 * The store's write-ahead journal: every change is appended as a JSON line and fsync'd before
 * the change is applied and acknowledged, so a process killed at any moment loses nothing it
 * acknowledged. Files are numbered by generation; a snapshot records the last generation it
 * includes, and only then are those files removed. A crash between snapshot and removal leaves
 * files the next open skips (and removes); replaying is idempotent anyway, as upserts are by URL.
 * Not safe for concurrent use: the store calls it under its own lock.
 */
export class Journal {
  private handle: FileHandle | undefined;
  /** Bytes in the current generation's file. */
  private size = 0;
  /** Bytes in every generation no snapshot includes yet. */
  private unsnapshotted = 0;
  /** Set when a failed append could not be cut off again: appending more would bury a bad line. */
  private broken: Error | undefined;

  private constructor(
    private readonly dir: string,
    private current: number,
  ) {}

  /**
   * Removes the generations up to `snapshotGeneration` (the snapshot has them), replays the
   * later ones in order and continues the last of them. A torn last line is cut off and
   * ignored; a damaged line with good lines after it is an error, since something other than a
   * crash mid-write changed the file.
   */
  static async open(
    dir: string,
    snapshotGeneration: number,
    replay: (record: JournalRecord) => Promise<void>,
  ): Promise<{ journal: Journal; replayed: JournalReplay }> {
    const generations = (await readdir(dir).catch(() => [] as string[]))
      .map((f) => FILE_PATTERN.exec(f)?.[1])
      .filter((g): g is string => g !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const journal = new Journal(dir, Math.max(snapshotGeneration + 1, ...generations));
    const replayed: JournalReplay = { records: 0, tornBytes: 0 };
    for (const generation of generations) {
      const path = join(dir, fileName(generation));
      if (generation <= snapshotGeneration) {
        await rm(path, { force: true });
        continue;
      }
      const { records, validBytes, totalBytes } = parseJournal(await readFile(path), path);
      for (const record of records) await replay(record);
      replayed.records += records.length;
      if (validBytes < totalBytes) {
        await truncate(path, validBytes);
        replayed.tornBytes += totalBytes - validBytes;
      }
      journal.unsnapshotted += validBytes;
      if (generation === journal.current) journal.size = validBytes;
    }
    return { journal, replayed };
  }

  /** The generation appends go to now. */
  get generation(): number {
    return this.current;
  }

  /** Bytes journaled since the last snapshot began. */
  get pendingBytes(): number {
    return this.unsnapshotted;
  }

  /** Appends one record and waits until it is on disk. */
  async append(record: JournalRecord): Promise<void> {
    await this.write(Buffer.from(`${JSON.stringify(record)}\n`));
  }

  /**
   * Appends an upsert of items given as their JSON (`JSON.stringify` of each StoredItem; the
   * line is the one `append` would write) and waits until it is on disk. Where each item's JSON
   * lies in the file: the store reads the items from there until a segment holds them.
   */
  async appendUpsert(site: string, items: readonly string[]): Promise<JournaledItems> {
    const head = `{"op":"upsert","site":${JSON.stringify(site)},"items":[`;
    const generation = this.current;
    const at: number[] = [];
    const lengths: number[] = [];
    let off = this.size + Buffer.byteLength(head);
    items.forEach((json, i) => {
      if (i > 0) off++; // the comma
      const len = Buffer.byteLength(json);
      at.push(off);
      lengths.push(len);
      off += len;
    });
    await this.write(Buffer.from(`${head}${items.join(',')}]}\n`));
    return { generation, path: this.path(generation), at, lengths };
  }

  private async write(line: Buffer): Promise<void> {
    if (this.broken) throw this.broken;
    const handle = this.handle ?? (await this.openCurrent());
    try {
      await handle.appendFile(line);
      await handle.datasync();
    } catch (err) {
      // Cut the partial line off, so the next record does not land behind garbage.
      await handle.truncate(this.size).catch(() => {
        this.broken = new Error(
          `the journal ${this.path(this.current)} could not be repaired: ${String(err)}`,
        );
      });
      throw err;
    }
    this.size += line.length;
    this.unsnapshotted += line.length;
  }

  /**
   * Starts a new generation and returns the one just closed: a snapshot taken now includes
   * everything up to it. Pass that to `removeThrough` once the snapshot is safely written.
   */
  async rotate(): Promise<number> {
    const closed = this.current;
    const handle = this.handle;
    this.handle = undefined;
    this.current++;
    this.size = 0;
    this.unsnapshotted = 0;
    this.broken = undefined;
    await handle?.close();
    return closed;
  }

  /** Deletes the files of every generation up to `generation` (a snapshot includes them). */
  async removeThrough(generation: number): Promise<void> {
    for (const f of await readdir(this.dir)) {
      const g = FILE_PATTERN.exec(f)?.[1];
      if (g !== undefined && Number(g) <= generation) await rm(join(this.dir, f), { force: true });
    }
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private path(generation: number): string {
    return join(this.dir, fileName(generation));
  }

  private async openCurrent(): Promise<FileHandle> {
    const handle = await open(this.path(this.current), 'a');
    if (this.size === 0) {
      // A new file: its directory entry must be on disk too, or the file may vanish in a crash.
      await syncDir(this.dir);
    }
    this.handle = handle;
    return handle;
  }
}

/** fsyncs a directory, so the names created or removed in it survive a power loss. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The records of one journal file, and how many bytes of it are good. Lines that do not parse
 * at the very end (a line without its newline, or garbage after the last good line) are a torn
 * tail; a bad line followed by a good one is damage, and an error.
 */
export function parseJournal(
  data: Buffer,
  path: string,
): { records: JournalRecord[]; validBytes: number; totalBytes: number } {
  const records: JournalRecord[] = [];
  let validBytes = 0;
  let firstBad: { line: number; reason: string } | undefined;
  let start = 0;
  for (let line = 1; start < data.length; line++) {
    const end = data.indexOf(0x0a, start);
    if (end === -1) break; // no newline: the write of this line never finished
    const record = parseLine(data.subarray(start, end));
    if (typeof record === 'string') {
      firstBad ??= { line, reason: record };
    } else {
      if (firstBad) {
        throw new Error(
          `${path} is damaged at line ${firstBad.line} (${firstBad.reason}) with good lines after it; ` +
            'refusing to start rather than lose acknowledged items',
        );
      }
      records.push(record);
      validBytes = end + 1;
    }
    start = end + 1;
  }
  return { records, validBytes, totalBytes: data.length };
}

/** A record, or why the line is not one. */
function parseLine(line: Buffer): JournalRecord | string {
  let raw: unknown;
  try {
    raw = JSON.parse(line.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  const parsed = JournalRecord.safeParse(raw);
  return parsed.success ? parsed.data : `not a journal record: ${parsed.error.issues[0]?.message ?? ''}`;
}
