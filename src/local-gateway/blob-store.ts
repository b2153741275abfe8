import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GatewayClock } from './clock.js';
import type { GatewayRandom } from './random.js';
import type { Records } from './records.js';

/** One stored file the gateway serves at a public, unguessable path until it expires. */
export interface Blob {
  /** `files` for uploads, `results` for generated outputs: the first segment of the served path. */
  area: 'files' | 'results';
  token: string;
  name: string;
  path: string;
  size: number;
  contentType: string;
  expiresAt: number;
}

/** A blob as kept between processes: its path follows from the data folder, and "until its task ends" is null. */
export interface BlobRecord {
  area: Blob['area'];
  name: string;
  size: number;
  contentType: string;
  expiresAt: number | null;
}

/** A blob never registered (a kill between writing its bytes and recording them) is removed after this long. */
const ORPHAN_GRACE_MS = 60 * 60_000;

/**
 * Files on disk under the data folder, each served at `/{area}/{token}/{name}`. Links carry no key,
 * like the signed CDN links of a hosted gateway, so a model (or anyone holding the link) can read them.
 */
export class BlobStore {
  private readonly blobs = new Map<string, Blob>();

  constructor(
    private readonly dir: string,
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
    private readonly records: Records<BlobRecord>,
  ) {}

  /** A fresh token and the file path it maps to, for callers that stream into place themselves. */
  async reserve(area: Blob['area'], name: string): Promise<{ token: string; path: string }> {
    await mkdir(join(this.dir, area), { recursive: true });
    for (;;) {
      const token = this.random.hex(16);
      const folder = join(this.dir, area, token);
      // A folder kept from an earlier process with the same seed may hold this token already.
      const made = await mkdir(folder).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'EEXIST') return false;
          throw error;
        },
      );
      if (made) return { token, path: join(folder, safeName(name)) };
    }
  }

  /** Records a blob whose bytes are in place; it is served (and, on disk, kept) from now on. */
  async register(blob: Blob): Promise<Blob> {
    const stored = { ...blob, name: safeName(blob.name) };
    this.blobs.set(stored.token, stored);
    await this.records.write(stored.token, recordOf(stored));
    return stored;
  }

  async put(area: Blob['area'], name: string, bytes: Buffer, contentType: string, expiresAt: number): Promise<Blob> {
    const { token, path } = await this.reserve(area, name);
    await writeFile(path, bytes);
    return this.register({ area, token, name, path, size: bytes.length, contentType, expiresAt });
  }

  /** Sets when a blob stops being served, as a result's files get their task's expiry. */
  async expireAt(blob: Blob, expiresAt: number): Promise<void> {
    blob.expiresAt = expiresAt;
    if (this.blobs.get(blob.token) === blob) await this.records.write(blob.token, recordOf(blob));
  }

  /**
   * The blob behind a served path, or undefined when it is unknown, expired or of another area.
   * A blob this process has not seen is looked for in the records an earlier process left.
   */
  async lookup(area: Blob['area'], token: string, name: string): Promise<Blob | undefined> {
    const blob = this.blobs.get(token) ?? (await this.recall(token));
    if (!blob || blob.area !== area || blob.name !== name) return undefined;
    if (blob.expiresAt <= this.clock.now()) {
      await this.remove(token);
      return undefined;
    }
    return blob;
  }

  async remove(token: string): Promise<void> {
    const blob = this.blobs.get(token) ?? (await this.recall(token));
    if (!blob) return;
    this.blobs.delete(token);
    await this.records.remove(token);
    await rm(join(this.dir, blob.area, token), { recursive: true, force: true });
  }

  /**
   * Removes what earlier processes left that can no longer be served: expired blobs, result files
   * of tasks that never ended, and folders whose bytes were never recorded. Young unrecorded
   * folders stay, since another process on the same folder may be writing them right now.
   */
  async prune(resultTtlMs: number): Promise<void> {
    const now = this.clock.now();
    const recorded = new Map(await this.records.readAll());
    for (const [token, record] of recorded) {
      const unfinishedTooLong = record.expiresAt === null && (await this.ageMs(record.area, token)) > resultTtlMs;
      if ((record.expiresAt !== null && record.expiresAt <= now) || unfinishedTooLong) {
        await this.records.remove(token);
        await rm(join(this.dir, record.area, token), { recursive: true, force: true });
      }
    }
    for (const area of ['files', 'results'] as const) {
      const tokens = await readdir(join(this.dir, area)).catch(() => [] as string[]);
      for (const token of tokens) {
        if (!recorded.has(token) && (await this.ageMs(area, token)) > ORPHAN_GRACE_MS)
          await rm(join(this.dir, area, token), { recursive: true, force: true });
      }
    }
  }

  private async recall(token: string): Promise<Blob | undefined> {
    const record = await this.records.read(token);
    if (!record) return undefined;
    const blob: Blob = {
      ...record,
      token,
      path: join(this.dir, record.area, token, record.name),
      expiresAt: record.expiresAt ?? Number.POSITIVE_INFINITY,
    };
    this.blobs.set(token, blob);
    return blob;
  }

  /** How long ago a folder was last written, by the file system's time (leftovers are a matter of real time). */
  private async ageMs(area: Blob['area'], token: string): Promise<number> {
    const found = await stat(join(this.dir, area, token)).catch(() => undefined);
    return found ? Date.now() - found.mtimeMs : Number.POSITIVE_INFINITY;
  }

  urlPath(blob: Blob): string {
    return `/${blob.area}/${blob.token}/${encodeURIComponent(blob.name)}`;
  }
}

function recordOf(blob: Blob): BlobRecord {
  const { area, name, size, contentType, expiresAt } = blob;
  return { area, name, size, contentType, expiresAt: Number.isFinite(expiresAt) ? expiresAt : null };
}

/** Keeps served names to one harmless path segment. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return (cleaned || 'file').slice(0, 120);
}
