import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import { err, ok, type Result } from '../result.js';
import { BLOB_TTL_S, blobKey, MAX_BLOB_BYTES } from './jobs.js';

/**
 * The files of `run:` items on workers, by the SHA-256 of their bytes, in Redis: the one store
 * both sides reach whether or not the step cache is on (its local tier is on one machine only).
 * Written once per hash; every read is checked against the hash.
 */
export class RedisBlobs {
  constructor(private readonly redis: Redis) {}

  /** Stores a file's bytes; its SHA-256, or why it cannot travel. */
  async putFile(path: string): Promise<Result<string, string>> {
    const size = (await stat(path)).size;
    if (size > MAX_BLOB_BYTES)
      return err(
        `${path} has ${size} bytes, over the ${MAX_BLOB_BYTES / 1024 / 1024} MiB a file may have to travel to or from a worker; use runs_on: local`,
      );
    return ok(await this.put(await readFile(path)));
  }

  async put(bytes: Buffer): Promise<string> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await this.redis.set(blobKey(sha256), bytes, 'EX', BLOB_TTL_S, 'NX');
    return sha256;
  }

  /** The bytes of a hash, checked; an error when they are missing or do not match. */
  async get(sha256: string): Promise<Result<Buffer, string>> {
    const bytes = await this.redis.getBuffer(blobKey(sha256));
    if (!bytes) return err(`the file with SHA-256 ${sha256} is not in Redis (expired, or Redis was emptied)`);
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== sha256) return err(`the file with SHA-256 ${sha256} arrived with other bytes (${actual})`);
    return ok(bytes);
  }
}
