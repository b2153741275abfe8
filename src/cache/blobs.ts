import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tempName } from '../files/temp-files.js';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * A copy that shares the source's blocks (a reflink) where the file system offers it, else an
 * ordinary copy. Never a hard link: a run's output is a file its user may edit, and an edit must
 * change neither the cache nor another run's output.
 */
const copyOrReflink = (source: string, dest: string) => copyFile(source, dest, constants.COPYFILE_FICLONE);

/**
 * File contents stored once per SHA-256 under `blobs/ab/<hash>`. A blob is written to a temp file
 * and renamed into place, so it is whole or absent; two writers of one hash both rename the same
 * bytes, and either one wins. A blob is trusted only after its bytes hash to its name: a damaged
 * one is never served, and the next `put` of the same bytes writes it anew.
 */
export class BlobStore {
  constructor(
    readonly dir: string,
    private readonly tmpDir: string,
  ) {}

  pathOf(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }

  /** Stores the file's bytes (unless a whole blob of them is there already); their hash and size. */
  async put(path: string): Promise<{ sha256: string; bytes: number }> {
    const hash = await sha256File(path);
    const target = this.pathOf(hash);
    const { size } = await stat(path);
    if (await this.has(hash)) return { sha256: hash, bytes: size };
    await mkdir(dirname(target), { recursive: true });
    const temp = tempName(this.tmpDir, hash);
    await copyOrReflink(path, temp);
    await rename(temp, target);
    return { sha256: hash, bytes: size };
  }

  /** Whether a whole blob of `hash` is here: its bytes are read and hashed. */
  async has(hash: string): Promise<boolean> {
    return (await sha256File(this.pathOf(hash)).catch(() => undefined)) === hash;
  }

  /**
   * Stores bytes that `fill` writes to a temp file (a download from another tier), once they are
   * known to hash to `hash`: `fill` answers `ok` only after checking them, and anything else
   * leaves nothing behind.
   */
  async receive<T extends string>(hash: string, fill: (temp: string) => Promise<T | 'ok'>): Promise<T | 'ok'> {
    const temp = tempName(this.tmpDir, hash);
    try {
      const filled = await fill(temp);
      if (filled !== 'ok') return filled;
      const target = this.pathOf(hash);
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
      return 'ok';
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  /**
   * Puts a copy of the blob's bytes at `dest`. The copy is hashed before it takes the name `dest`,
   * so a blob damaged on disk never becomes a run's output; a damaged blob is removed, for the run
   * that pays for those bytes again to store them whole.
   */
  async materialize(hash: string, dest: string): Promise<'ok' | 'missing' | 'damaged'> {
    const source = this.pathOf(hash);
    await mkdir(dirname(dest), { recursive: true });
    // Beside `dest`, as a download's `.part` is: a rename within one folder cannot cross devices.
    const temp = `${dest}.part`;
    try {
      await copyOrReflink(source, temp);
    } catch {
      return 'missing';
    }
    if ((await sha256File(temp)) !== hash) {
      await unlink(temp).catch(() => undefined);
      await unlink(source).catch(() => undefined);
      return 'damaged';
    }
    await rename(temp, dest);
    return 'ok';
  }
}
