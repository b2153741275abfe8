import { type CacheEntry, NOT_SERVED, parseEntry } from './entry.js';
import type { ObjectStore } from './object-store.js';
import { signatureMatches, signEntry } from './signing.js';

export interface RemoteTierOptions {
  /** `--cache-remote-read-only`: read, never write (a pull request's job, which must not poison it). */
  readOnly: boolean;
  /** PIPELINE_CACHE_SIGNING_KEY: entries written are signed, and only entries signed with it are read. */
  signingKey?: string | undefined;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** A problem the run survives, said in one line: the run goes on with the local tier. */
  warn: (message: string) => void;
}

const entryName = (key: string) => `entries/${key}.json`;
const blobName = (sha256: string) => `blobs/${sha256}`;
/** `used/<key>`: when a run was last served the entry, as `{"used_at": ms}`; prune keeps an entry by it. */
const useName = (key: string) => `used/${key}`;

/** When a use marker says its entry was last served; undefined when it is absent or unreadable. */
function usedAt(text: string | undefined): number | undefined {
  try {
    const { used_at } = JSON.parse(text ?? '') as { used_at?: unknown };
    return typeof used_at === 'number' ? used_at : undefined;
  } catch {
    return undefined;
  }
}

/** Every `path` member of an object anywhere in `value`: how outputs name files. */
function pathsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(pathsIn);
  if (typeof value !== 'object' || value === null) return [];
  const own = typeof (value as { path?: unknown }).path === 'string' ? [(value as { path: string }).path] : [];
  return [...own, ...Object.values(value).flatMap(pathsIn)];
}

/** When an entry's text says it was stored, and the hashes it names, whatever else is wrong with it. */
function namedIn(text: string | undefined): { createdAt: number | undefined; files: string[] } {
  try {
    const { created_at, files } = JSON.parse(text ?? '') as {
      created_at?: unknown;
      files?: Array<{ sha256?: unknown }>;
    };
    return {
      createdAt: typeof created_at === 'number' ? created_at : undefined,
      files: (Array.isArray(files) ? files : []).flatMap((file) =>
        typeof file?.sha256 === 'string' ? [file.sha256] : [],
      ),
    };
  } catch {
    return { createdAt: undefined, files: [] };
  }
}

/** What went wrong, in a few words: the SDK's error name and message, or the system's code. */
function briefly(error: unknown): string {
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  const label = code ?? name ?? 'Error';
  const text = (message ?? String(error)).split('\n')[0]!.slice(0, 200);
  return text.startsWith(label) ? text : `${label}: ${text}`;
}

/**
 * The second tier of the step cache: entries and blobs in a bucket that several machines share.
 * Nothing it gives is trusted before it is checked: an entry must parse, match its digest and the
 * key it is stored under, and (with a signing key) carry a valid signature; a blob must hash to
 * its name. Anything else is a miss with a warning that names the object. Entries are written
 * once and never replaced, but by a run that found the stored one unusable and ran the step. The first failure to reach the store is one warning, after which the
 * run uses the local tier only: a cache is an optimisation, never a requirement.
 */
export class RemoteTier {
  private reachable = true;
  private writable: boolean;
  /** Blobs found damaged in the bucket this run: the run that pays for their bytes again puts them back whole. */
  private readonly damaged = new Set<string>();
  /**
   * Keys whose stored entry this run found unusable (damaged, a blob of it damaged, or unsigned
   * where this run signs): the one exception to write-once. The run that then ran the step puts
   * its own result in that entry's place; else the broken entry would make every machine pay for
   * the step until pruned. An entry signed with another key is never replaced.
   */
  private readonly unusable = new Set<string>();

  constructor(
    readonly store: ObjectStore,
    private readonly options: RemoteTierOptions,
  ) {
    this.writable = !options.readOnly;
  }

  get location(): string {
    return this.store.location;
  }

  private where(name: string): string {
    return `${this.store.location}/${name}`;
  }

  /** The remote for a message about reaching it: its address, and the endpoint it is reached at if not the provider's. */
  get shown(): string {
    return this.store.endpoint ? `${this.store.location} (at ${this.store.endpoint})` : this.store.location;
  }

  /** Runs one call to the store; its failure turns the remote off for this run, said once. */
  private async attempt<T>(doing: 'read' | 'write', call: () => Promise<T>): Promise<T | undefined> {
    if (!this.reachable || (doing === 'write' && !this.writable)) return undefined;
    try {
      return await call();
    } catch (error) {
      if (doing === 'write') {
        this.writable = false;
        this.options.warn(
          `remote cache ${this.shown} could not be written (${briefly(error)}); going on without writing to it`,
        );
      } else {
        this.reachable = false;
        this.options.warn(
          `remote cache ${this.shown} could not be read (${briefly(error)}); going on with the local cache only`,
        );
      }
      return undefined;
    }
  }

  /**
   * The verified entry stored under `key`, unless there is none, it is older than `maxAgeMs`, or
   * it fails a check (warned, with the object's address).
   */
  async getEntry(key: string, maxAgeMs: number | null): Promise<CacheEntry | undefined> {
    const text = await this.attempt('read', () => this.store.read(entryName(key)));
    if (text === undefined) return undefined;
    const checked = this.check(text, key);
    if ('problem' in checked) {
      // Not an entry signed with another key: that is another signer's, and replacing it would
      // start a tug of war between two keys. A damaged or unsigned one this run may replace.
      if (!checked.signedByAnother) this.unusable.add(key);
      this.options.warn(`${this.where(entryName(key))}: ${checked.problem}; ${NOT_SERVED}`);
      return undefined;
    }
    if (maxAgeMs !== null && this.options.now() - checked.entry.created_at > maxAgeMs) return undefined;
    return checked.entry;
  }

  private check(text: string, key: string): { entry: CacheEntry } | { problem: string; signedByAnother?: boolean } {
    let signature: unknown;
    let unsigned: string = text;
    try {
      const { signature: found, ...rest } = JSON.parse(text) as Record<string, unknown>;
      signature = found;
      unsigned = JSON.stringify(rest);
    } catch {
      // parseEntry says what is wrong with it.
    }
    const parsed = parseEntry(unsigned, key);
    if ('problem' in parsed) return { problem: `unusable entry (${parsed.problem})` };
    // A file of the outputs is one of the entry's blobs, put in this run's outputs folder on a hit.
    // A `path` that is not would stay as written: a forged entry could make `--out` copy any file
    // of this machine (a key, a token) into a build that CI then publishes.
    const held = new Set(parsed.entry.files.map((file) => file.path));
    const stray = pathsIn(parsed.entry.outputs).find((path) => !held.has(path));
    if (stray !== undefined)
      return { problem: 'unusable entry (its outputs name a file that is not one of its files)' };
    const { signingKey } = this.options;
    if (signingKey !== undefined) {
      if (signature === undefined) return { problem: 'the entry is not signed, and PIPELINE_CACHE_SIGNING_KEY is set' };
      if (!signatureMatches(parsed.entry, signature, signingKey))
        return {
          problem: 'the entry is not signed with PIPELINE_CACHE_SIGNING_KEY (a wrong or forged signature)',
          signedByAnother: true,
        };
    }
    return parsed;
  }

  /** The entry of `key` names a blob that failed its check: it is unusable. */
  markUnusable(key: string): void {
    this.unusable.add(key);
  }

  /**
   * Downloads the blob into `path` (a temp file of the local tier) and checks its bytes against
   * `hash`: `damaged` (warned) when they differ, `missing` when the bucket has no such blob or
   * cannot be read.
   */
  async fetchBlob(sha256: string, path: string, hashOf: (path: string) => Promise<string>) {
    const found = await this.attempt('read', () => this.store.download(blobName(sha256), path));
    if (!found) return 'missing' as const;
    if ((await hashOf(path)) === sha256) return 'ok' as const;
    this.damaged.add(sha256);
    this.options.warn(
      `${this.where(blobName(sha256))}: its bytes do not hash to its name (changed in the bucket); running the step instead`,
    );
    return 'damaged' as const;
  }

  /** Whether this run may still write to the remote (not read-only, and no write has failed). */
  get canWrite(): boolean {
    return this.reachable && this.writable;
  }

  /**
   * Stores a new entry: its blobs first, then the entry (signed when there is a key), so that an
   * entry another machine can read names blobs that are there. Nothing is written in read-only
   * mode, and an entry already stored is never replaced, unless this run found it unusable.
   * Answers whether the remote holds the entry afterwards (written now, or there already).
   */
  async putEntry(entry: CacheEntry, blobPath: (sha256: string) => string): Promise<boolean> {
    for (const file of entry.files) {
      const name = blobName(file.sha256);
      const body = { path: blobPath(file.sha256), bytes: file.bytes };
      const done = await this.attempt('write', async () => {
        if (!this.damaged.has(file.sha256)) return this.store.create(name, body);
        await this.store.replace(name, body);
        return 'stored';
      });
      if (done === undefined) return false;
      this.damaged.delete(file.sha256);
    }
    const { signingKey } = this.options;
    const signed = signingKey === undefined ? entry : { ...entry, signature: signEntry(entry, signingKey) };
    const body = { text: JSON.stringify(signed) };
    const done = await this.attempt('write', async () => {
      if (!this.unusable.has(entry.key)) return this.store.create(entryName(entry.key), body);
      await this.store.replace(entryName(entry.key), body);
      this.unusable.delete(entry.key);
      return 'stored';
    });
    return done !== undefined;
  }

  /**
   * A run was served the entry under `key`: its use marker says when, on the tier's clock, so that
   * `prune` keeps an entry in daily use however long ago it was made. Not in read-only mode (a pull
   * request's job); a failure is the usual one warning. Answers whether the marker was written.
   */
  async markUsed(key: string): Promise<boolean> {
    const body = { text: JSON.stringify({ used_at: this.options.now() }) };
    const written = await this.attempt('write', async () => {
      await this.store.replace(useName(key), body);
      return true;
    });
    return written === true;
  }

  /** Every entry that passes the checks, oldest first; the others are left out with a warning. Throws when unreachable. */
  async list(): Promise<CacheEntry[]> {
    const entries: CacheEntry[] = [];
    for (const object of await this.store.list('entries/')) {
      const key = object.name.slice('entries/'.length, -'.json'.length);
      const text = await this.store.read(object.name);
      if (text === undefined) continue;
      const checked = this.check(text, key);
      if ('problem' in checked) this.options.warn(`${this.where(object.name)}: ${checked.problem}`);
      else entries.push(checked.entry);
    }
    return entries.sort((a, b) => a.created_at - b.created_at);
  }

  /**
   * Removes the entries neither stored nor used for `olderThanMs` (stored by their `created_at`, or
   * the object's date when unreadable; used by their use marker), with their markers, then the
   * blobs that no remaining entry names and that are as old: a blob another machine stored a
   * moment ago, for an entry it is about to write, stays. Throws when the bucket cannot be read or
   * written.
   */
  async prune(olderThanMs: number): Promise<{ entries: number; blobs: number; bytes: number }> {
    const cutoff = this.options.now() - olderThanMs;
    const objects = await this.store.list('');
    const markers = new Set(objects.filter((o) => o.name.startsWith('used/')).map((o) => o.name));
    // A marker is read only for an entry made before the cutoff: the others are kept anyway.
    const lastUse = async (key: string) =>
      markers.has(useName(key)) ? usedAt(await this.store.read(useName(key))) : undefined;
    const oldEntries: string[] = [];
    const kept = new Set<string>();
    const keptKeys = new Set<string>();
    for (const object of objects.filter((o) => o.name.startsWith('entries/') && o.name.endsWith('.json'))) {
      const key = object.name.slice('entries/'.length, -'.json'.length);
      const named = namedIn(await this.store.read(object.name));
      if ((named.createdAt ?? object.modifiedAt) < cutoff && ((await lastUse(key)) ?? 0) < cutoff)
        oldEntries.push(object.name);
      else {
        keptKeys.add(key);
        // Any young entry's files, signed or not, whole or not: pruning by age removes no young entry's blob.
        for (const hash of named.files) kept.add(hash);
      }
    }
    const oldBlobs = objects.filter(
      (o) => o.name.startsWith('blobs/') && o.modifiedAt < cutoff && !kept.has(o.name.slice('blobs/'.length)),
    );
    // The markers of the entries removed, and of none kept: an entry's marker goes with it.
    const oldMarkers = [...markers].filter((name) => !keptKeys.has(name.slice('used/'.length)));
    await this.store.remove([...oldEntries, ...oldMarkers, ...oldBlobs.map((o) => o.name)]);
    return {
      entries: oldEntries.length,
      blobs: oldBlobs.length,
      bytes: oldBlobs.reduce((sum, o) => sum + o.bytes, 0),
    };
  }
}
