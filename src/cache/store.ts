import { createHash } from 'node:crypto';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { err, ok, type Result } from '../result.js';
import { removeLeftoverTemps, tempName } from '../files/temp-files.js';
import { BlobStore } from './blobs.js';
import { type CacheEntry, type CachedFile, NOT_SERVED, parseEntry, sealEntry } from './entry.js';
import { CACHE_FORMAT } from './key.js';

export type { CacheEntry, CachedFile } from './entry.js';

/** A file of an output, to be stored with the entry. */
export interface FileToStore {
  /** Where the run wrote it: its bytes are read from here, and `path` in the outputs names it. */
  path: string;
  url: string | null;
  expires_at: number | null;
}

export interface StoreOptions {
  /** Milliseconds since the epoch: a manual clock in tests. */
  now: () => number;
  /** A problem the run survives (a damaged entry, a failed write): said once each, never thrown. */
  warn: (message: string) => void;
}

/**
 * The content-addressed step cache on disk: `entries/ab/<key>.json`, one JSON file per key, and
 * `blobs/ab/<sha256>`, the files of the outputs stored once per content. Every file is written to
 * `tmp/` and renamed into place, so a reader sees a whole entry or none; two processes that write
 * one key at once each rename a whole entry, and the last rename stands. A damaged entry is a miss
 * with a warning, never a crash or a wrong output.
 */
export class CacheStore {
  private readonly entriesDir: string;
  private readonly tmpDir: string;
  readonly blobs: BlobStore;

  private constructor(
    readonly dir: string,
    private readonly options: StoreOptions,
  ) {
    this.entriesDir = join(dir, 'entries');
    this.tmpDir = join(dir, 'tmp');
    this.blobs = new BlobStore(join(dir, 'blobs'), this.tmpDir);
  }

  /** The store in `dir`, created if need be; or why it cannot be written to. */
  static open(dir: string, options: StoreOptions): Result<CacheStore, string> {
    try {
      for (const sub of ['entries', 'blobs', 'tmp']) mkdirSync(join(dir, sub), { recursive: true });
      // A folder that exists but refuses writes shows up here, once, not at every entry.
      const probe = tempName(join(dir, 'tmp'), 'probe');
      writeFileSync(probe, '');
      unlinkSync(probe);
    } catch (error) {
      return err(`cannot write to the cache folder ${dir}: ${(error as Error).message}`);
    }
    // What a killed writer left half-written (a large blob can be hundreds of MB) goes now.
    removeLeftoverTemps(join(dir, 'tmp'), options.now());
    return ok(new CacheStore(dir, options));
  }

  private entryPath(key: string): string {
    return join(this.entriesDir, key.slice(0, 2), `${key}.json`);
  }

  /** `remotes/<a hash of the remote's location>/ab/<key>`: an empty file for each entry that remote holds. */
  private sharedMark(location: string, key: string): string {
    const remote = createHash('sha256').update(location).digest('hex').slice(0, 16);
    return join(this.dir, 'remotes', remote, key.slice(0, 2), key);
  }

  /** Whether the remote at `location` is known to hold the entry of `key` (this store read it from there, or wrote it). */
  async isShared(location: string, key: string): Promise<boolean> {
    return (await this.sharedNoteAge(location, key)) !== undefined;
  }

  /** Forgets which entries the remote at `location` holds (it was pruned): the next hits write them again. */
  async forgetShared(location: string): Promise<void> {
    await rm(dirname(dirname(this.sharedMark(location, '00'))), { recursive: true, force: true });
  }

  /**
   * How long ago, on the cache's clock, the remote at `location` was last told of the entry of
   * `key` (written there, or its use marked); undefined when it is not known to hold it.
   */
  async sharedNoteAge(location: string, key: string): Promise<number | undefined> {
    const noted = await stat(this.sharedMark(location, key)).catch(() => undefined);
    return noted && this.options.now() - noted.mtimeMs;
  }

  /**
   * Remembers that the remote at `location` holds the entry of `key`, last told of it at `toldAt`
   * (the mark's modification time; now by default); a failure only means it is written again.
   */
  async markShared(location: string, key: string, toldAt = this.options.now()): Promise<void> {
    const mark = this.sharedMark(location, key);
    try {
      await mkdir(dirname(mark), { recursive: true });
      await writeFile(mark, '');
      await utimes(mark, new Date(toldAt), new Date(toldAt));
    } catch {
      // Not knowing costs one more create-if-absent at the remote, which changes nothing there.
    }
  }

  /** The entry stored under `key`, unless it is absent, older than `maxAgeMs`, or damaged (warned). */
  async get(key: string, maxAgeMs: number | null): Promise<CacheEntry | undefined> {
    let text: string;
    try {
      text = await readFile(this.entryPath(key), 'utf8');
    } catch {
      return undefined;
    }
    const parsed = parseEntry(text, key);
    if ('problem' in parsed) {
      this.options.warn(`cache entry ${key.slice(0, 12)} is unusable (${parsed.problem}); ${NOT_SERVED}`);
      return undefined;
    }
    const { entry } = parsed;
    if (maxAgeMs !== null && this.options.now() - entry.created_at > maxAgeMs) return undefined;
    return entry;
  }

  /**
   * Stores the outputs and their files under `key`; answers the entry stored. A failure is a
   * warning and no entry, and the run goes on.
   */
  async put(
    key: string,
    action: string,
    outputs: unknown,
    files: FileToStore[],
    saved: CacheEntry['saved'],
    runId?: string,
  ): Promise<CacheEntry | undefined> {
    try {
      const stored: CachedFile[] = [];
      for (const file of files) stored.push({ ...(await this.blobs.put(file.path)), ...file });
      const entry = sealEntry({
        format: CACHE_FORMAT,
        key,
        action,
        created_at: this.options.now(),
        ...(runId === undefined ? {} : { run_id: runId }),
        outputs,
        files: stored,
        saved,
      });
      await this.writeEntry(entry);
      return entry;
    } catch (error) {
      this.options.warn(`could not store cache entry ${key.slice(0, 12)}: ${(error as Error).message}`);
      return undefined;
    }
  }

  /**
   * Keeps an entry another tier gave, as it is (its time of creation included, so a TTL counts from
   * when it ran): the caller has checked it and put every blob it names into `blobs`.
   */
  async adopt(entry: CacheEntry): Promise<void> {
    try {
      await this.writeEntry(entry);
    } catch (error) {
      this.options.warn(`could not store cache entry ${entry.key.slice(0, 12)}: ${(error as Error).message}`);
    }
  }

  private async writeEntry(entry: CacheEntry): Promise<void> {
    const target = this.entryPath(entry.key);
    await mkdir(dirname(target), { recursive: true });
    const temp = tempName(this.tmpDir, entry.key);
    await writeFile(temp, JSON.stringify(entry));
    // Its modification time is when it was last made or used (markUsed), on the cache's clock.
    const made = new Date(entry.created_at);
    await utimes(temp, made, made);
    await rename(temp, target);
  }

  /**
   * A run was served the entry: its file's modification time says so, which `prune` keeps it by
   * (and which actions/cache's tar carries from job to job). An entry made once and used every day
   * is not pruned a month after it was made, to be paid for again.
   */
  async markUsed(key: string): Promise<void> {
    const at = new Date(this.options.now());
    await utimes(this.entryPath(key), at, at).catch(() => undefined);
  }

  /** Puts a copy of a stored file's bytes at `dest` (a reflink where possible), checked against their hash. */
  materialize(sha256: string, dest: string): Promise<'ok' | 'missing' | 'damaged'> {
    return this.blobs.materialize(sha256, dest);
  }

  /** Every readable entry, oldest first; damaged ones are left out with a warning. */
  async list(): Promise<CacheEntry[]> {
    const entries: CacheEntry[] = [];
    for (const key of await this.keys()) {
      const entry = await this.get(key, null);
      if (entry) entries.push(entry);
    }
    return entries.sort((a, b) => a.created_at - b.created_at);
  }

  /** The keys of the entries stored now, damaged ones too (get tells those). */
  async storedKeys(): Promise<ReadonlySet<string>> {
    return new Set(await this.keys());
  }

  private async keys(): Promise<string[]> {
    const keys: string[] = [];
    for (const shard of await readdir(this.entriesDir).catch(() => [])) {
      for (const name of await readdir(join(this.entriesDir, shard)).catch(() => [])) {
        if (name.endsWith('.json')) keys.push(name.slice(0, -'.json'.length));
      }
    }
    return keys;
  }

  /**
   * Removes the entries neither stored nor used by a run for `olderThanMs` (and damaged ones), then
   * the blobs no entry left names, and stale temp files. A run writing at the same moment may lose a blob it
   * just stored; its entry is then a miss, never a wrong output.
   */
  async prune(olderThanMs: number): Promise<{ entries: number; blobs: number; bytes: number }> {
    const cutoff = this.options.now() - olderThanMs;
    const kept = new Set<string>();
    let entries = 0;
    for (const key of await this.keys()) {
      const text = await readFile(this.entryPath(key), 'utf8').catch(() => '');
      const parsed = parseEntry(text, key);
      const usedAt = (await stat(this.entryPath(key)).catch(() => undefined))?.mtimeMs ?? 0;
      if ('entry' in parsed && Math.max(parsed.entry.created_at, usedAt) >= cutoff) {
        for (const file of parsed.entry.files) kept.add(file.sha256);
        continue;
      }
      await unlink(this.entryPath(key)).catch(() => undefined);
      entries++;
    }
    const removed = await this.removeBlobsExcept(kept);
    await this.removeStaleTemps(cutoff);
    return { entries, ...removed };
  }

  private async removeBlobsExcept(kept: Set<string>): Promise<{ blobs: number; bytes: number }> {
    let blobs = 0;
    let bytes = 0;
    for (const shard of await readdir(this.blobs.dir).catch(() => [])) {
      for (const hash of await readdir(join(this.blobs.dir, shard)).catch(() => [])) {
        if (kept.has(hash)) continue;
        const path = join(this.blobs.dir, shard, hash);
        bytes += (await stat(path).catch(() => ({ size: 0 }))).size;
        await unlink(path).catch(() => undefined);
        blobs++;
      }
    }
    return { blobs, bytes };
  }

  private async removeStaleTemps(cutoff: number): Promise<void> {
    for (const name of await readdir(this.tmpDir).catch(() => [])) {
      const path = join(this.tmpDir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < cutoff) await rm(path, { force: true });
    }
  }

  /** Removes every entry and blob; answers how many entries there were. */
  async clear(): Promise<{ entries: number }> {
    const entries = (await this.keys()).length;
    for (const sub of ['entries', 'blobs', 'tmp']) {
      await rm(join(this.dir, sub), { recursive: true, force: true });
      await mkdir(join(this.dir, sub), { recursive: true });
    }
    await rm(join(this.dir, 'remotes'), { recursive: true, force: true });
    return { entries };
  }
}
