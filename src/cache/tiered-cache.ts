import { sha256File } from './blobs.js';
import type { RemoteTier } from './remote-tier.js';
import type { CacheEntry, CacheStore, FileToStore } from './store.js';

/** How often a machine tells the remote that an entry is still in use. */
const REMOTE_USE_INTERVAL_MS = 24 * 60 * 60 * 1000;

/**
 * The step cache as a run uses it: the local store first, and a remote tier behind it when there
 * is one. A local miss is looked up in the remote; what it gives is checked (entry and every blob),
 * then kept in the local store, so the next run on this machine finds it there. A new entry is
 * stored locally, then in the remote. A file missing or damaged locally is fetched from the remote.
 *
 * The local store remembers which of its entries the remote holds (read from it or written to it).
 * A local hit on one it does not know of, such as an entry made before the remote was set, is
 * written to the remote then, so what one machine paid for reaches the others however it was made.
 */
export class TieredCache {
  constructor(
    readonly local: CacheStore,
    readonly remote: RemoteTier | undefined,
  ) {}

  async get(key: string, maxAgeMs: number | null): Promise<CacheEntry | undefined> {
    const local = await this.local.get(key, maxAgeMs);
    if (local) {
      await this.share(local);
      return local;
    }
    if (!this.remote) return undefined;
    const entry = await this.remote.getEntry(key, maxAgeMs);
    if (!entry) return undefined;
    for (const file of entry.files) {
      const fetched = await this.fetchBlob(file.sha256);
      if (fetched === 'damaged') this.remote.markUnusable(key);
      if (fetched !== 'ok') return undefined;
    }
    await this.local.adopt(entry);
    // What the remote last heard of it is its making: this run's use of it is news (markUsed).
    await this.local.markShared(this.remote.location, key, entry.created_at);
    return entry;
  }

  async put(
    key: string,
    action: string,
    outputs: unknown,
    files: FileToStore[],
    saved: CacheEntry['saved'],
    runId?: string,
  ) {
    const entry = await this.local.put(key, action, outputs, files, saved, runId);
    if (entry) await this.share(entry);
    return entry;
  }

  /** Writes a local entry to the remote unless the remote is known to hold it (or cannot be written). */
  private async share(entry: CacheEntry): Promise<void> {
    const remote = this.remote;
    if (!remote?.canWrite || (await this.local.isShared(remote.location, entry.key))) return;
    // Told of it as of its making: an entry made long ago and shared only now (a local cache turned
    // onto a bucket) is read as old there, and its use now is news to the remote (markUsed).
    if (await remote.putEntry(entry, (hash) => this.local.blobs.pathOf(hash)))
      await this.local.markShared(remote.location, entry.key, entry.created_at);
  }

  /**
   * A run was served the entry under `key`: the local store keeps it by that use (see
   * CacheStore.markUsed), and so does the remote, by a use marker (RemoteTier.markUsed) written at
   * most once a day per entry from this machine: `prune --remote` counts in days, and a batch of
   * thousands of hits a run would otherwise write thousands of markers.
   */
  async markUsed(key: string): Promise<void> {
    await this.local.markUsed(key);
    const remote = this.remote;
    if (!remote?.canWrite) return;
    // Unknown to be there: share() has just written it, or could not, and a marker would name nothing.
    const age = await this.local.sharedNoteAge(remote.location, key);
    if (age === undefined || age < REMOTE_USE_INTERVAL_MS) return;
    if (await remote.markUsed(key)) await this.local.markShared(remote.location, key);
  }

  async materialize(sha256: string, dest: string): Promise<'ok' | 'missing' | 'damaged'> {
    const placed = await this.local.materialize(sha256, dest);
    if (placed === 'ok' || !this.remote) return placed;
    if ((await this.fetchBlob(sha256)) !== 'ok') return placed;
    return this.local.materialize(sha256, dest);
  }

  /** The remote's blob into the local store, checked; a whole local copy makes the download needless. */
  private async fetchBlob(sha256: string): Promise<'ok' | 'missing' | 'damaged'> {
    if (await this.local.blobs.has(sha256)) return 'ok';
    const remote = this.remote!;
    return this.local.blobs.receive(sha256, (temp) => remote.fetchBlob(sha256, temp, sha256File));
  }
}
