import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Result } from '../result.js';
import type { StepFailure } from './failure.js';

/** A file of a cached output, as the store keeps it. */
export interface StoredFile {
  sha256: string;
  bytes: number;
  path: string;
  url: string | null;
  expires_at: number | null;
}

export interface StoredEntry {
  key: string;
  /** When and by which run it was made (no run in entries of earlier versions). */
  created_at: number;
  run_id?: string;
  outputs: unknown;
  files: StoredFile[];
  saved: { tasks: number; requests: number };
}

/** The step cache as the engine sees it: the command line gives it the store on disk, and a remote tier behind it. */
export interface CacheStorage {
  get(key: string, maxAgeMs: number | null): Promise<StoredEntry | undefined>;
  put(
    key: string,
    action: string,
    outputs: unknown,
    files: Array<{ path: string; url: string | null; expires_at: number | null }>,
    saved: { tasks: number; requests: number },
    /** The run that makes it. */
    runId?: string,
  ): Promise<unknown>;
  /** Puts a stored file's bytes at `dest`, checked against their hash. */
  materialize(sha256: string, dest: string): Promise<'ok' | 'missing' | 'damaged'>;
  /** A run was served the entry under `key`: pruning keeps an entry by its last use. */
  markUsed(key: string): Promise<void>;
}

export interface CacheCounts {
  hits: number;
  misses: number;
  tasks_saved: number;
  requests_saved: number;
}

/**
 * The step cache of one run: the store, whether to read it (not with `--refresh`) and write it,
 * the requests of this run by key (two items with one key are sent once), and the counts.
 */
export class RunCache {
  readonly inflight = new Map<string, Promise<Result<unknown, StepFailure>>>();
  readonly counts: CacheCounts = { hits: 0, misses: 0, tasks_saved: 0, requests_saved: 0 };
  /** `row/step` → the keys of its items that came from the cache. */
  readonly hitKeys = new Map<string, string[]>();
  private readonly hashes = new Map<string, Promise<string>>();

  constructor(
    readonly storage: CacheStorage,
    readonly mode: { read: boolean; write: boolean },
    readonly warn: (message: string) => void,
    /** The gateway the run's requests go to (`local`, or the media API base): part of their keys. */
    readonly gateway: string,
  ) {}

  /** The SHA-256 of a file's bytes, read once per run and path. */
  hashOf(path: string): Promise<string> {
    let hash = this.hashes.get(path);
    if (!hash) {
      hash = (async () => {
        const digest = createHash('sha256');
        for await (const chunk of createReadStream(path)) digest.update(chunk as Buffer);
        return digest.digest('hex');
      })();
      this.hashes.set(path, hash);
    }
    return hash;
  }

  recordHit(stepKey: string, key: string, saved: { tasks: number; requests: number }): void {
    this.counts.hits++;
    this.counts.tasks_saved += saved.tasks;
    this.counts.requests_saved += saved.requests;
    this.hitKeys.set(stepKey, [...(this.hitKeys.get(stepKey) ?? []), key]);
  }
}
