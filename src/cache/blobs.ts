import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A file name no other writer, in this process or another, picks at the same time. */
export const tempName = (dir: string, base: string) =>
  join(dir, `${base}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);

/**
 * File contents stored once per SHA-256 under `blobs/ab/<hash>`. A blob is written to a temp file
 * and renamed into place, so it is whole or absent; two writers of one hash both rename the same
 * bytes, and either one wins.
 */
export class BlobStore {
  constructor(
    readonly dir: string,
    private readonly tmpDir: string,
  ) {}

  pathOf(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }

  /** Stores the file's bytes (unless they are there already); their hash and size. */
  async put(path: string): Promise<{ sha256: string; bytes: number }> {
    const hash = await sha256File(path);
    const target = this.pathOf(hash);
    const { size } = await stat(path);
    const existing = await stat(target).catch(() => undefined);
    if (existing?.size === size) return { sha256: hash, bytes: size };
    await mkdir(dirname(target), { recursive: true });
    const temp = tempName(this.tmpDir, hash);
    await copyFile(path, temp);
    await rename(temp, target);
    return { sha256: hash, bytes: size };
  }

  /**
   * Puts the blob's bytes at `dest`: a hard link when the file system allows one, else a copy.
   * The bytes are hashed first: a blob damaged on disk must never become a run's output.
   */
  async materialize(hash: string, dest: string): Promise<'ok' | 'missing' | 'damaged'> {
    const source = this.pathOf(hash);
    const actual = await sha256File(source).catch(() => undefined);
    if (actual === undefined) return 'missing';
    if (actual !== hash) return 'damaged';
    await mkdir(dirname(dest), { recursive: true });
    await unlink(dest).catch(() => undefined);
    try {
      await link(source, dest);
    } catch {
      // Another device, or a file system without hard links: a copy costs space, not correctness.
      await copyFile(source, dest);
    }
    return 'ok';
  }
}
