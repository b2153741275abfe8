import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { CACHE_FORMAT, isCacheKey } from './key.js';

/**
 * What an unusable entry means, said where it is found. Not "running the step instead": `plan` and
 * `cache list` meet such entries too, and run nothing.
 */
export const NOT_SERVED = 'it counts as not cached, and a run makes its step again';

/** A file of a cached output: its bytes are the blob `sha256`. */
export interface CachedFile {
  sha256: string;
  bytes: number;
  /** Where the output named it in the run that stored it; replaced by the new copy's path on a hit. */
  path: string;
  /** The gateway URL it had, and when that URL stops working (null: never, or not known). */
  url: string | null;
  expires_at: number | null;
}

/** One cached request: what its step gave, and what running it cost. */
export interface CacheEntry {
  format: number;
  key: string;
  /** The action, for `pipeline cache list`: `model vendor/slug`, `web-search`… */
  action: string;
  created_at: number;
  /** The run that made it, for the report's card of a cached item; absent in entries of earlier versions. */
  run_id?: string;
  outputs: unknown;
  files: CachedFile[];
  /** What a hit saves: tasks submitted and requests made when it ran. */
  saved: { tasks: number; requests: number };
  /**
   * SHA-256 of the canonical JSON of every other field: an entry edited by hand (or by a bad disk)
   * into other valid JSON no longer matches it, and is a miss rather than a hit with wrong values.
   */
  digest: string;
}

const digestOf = (entry: Omit<CacheEntry, 'digest'>): string =>
  createHash('sha256')
    .update(canonicalJson({ ...entry, digest: undefined }))
    .digest('hex');

/** The entry with its digest. */
export const sealEntry = (entry: Omit<CacheEntry, 'digest'>): CacheEntry => ({ ...entry, digest: digestOf(entry) });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isFile = (value: unknown): value is CachedFile =>
  isObject(value) &&
  typeof value.sha256 === 'string' &&
  isCacheKey(value.sha256) &&
  typeof value.bytes === 'number' &&
  typeof value.path === 'string' &&
  (value.url === null || typeof value.url === 'string') &&
  (value.expires_at === null || typeof value.expires_at === 'number');

/** The entry in `text` if it is whole, of this format, and stored under `key`; else why not. */
export function parseEntry(text: string, key: string): { entry: CacheEntry } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'it is not whole JSON (cut short or damaged)' };
  }
  if (!isObject(value)) return { problem: 'it is not an object' };
  if (value.format !== CACHE_FORMAT) return { problem: `it has format ${String(value.format)}` };
  if (value.key !== key) return { problem: 'it names another key' };
  const saved = value.saved;
  const shapeOk =
    typeof value.action === 'string' &&
    typeof value.created_at === 'number' &&
    (value.run_id === undefined || typeof value.run_id === 'string') &&
    'outputs' in value &&
    Array.isArray(value.files) &&
    value.files.every(isFile) &&
    isObject(saved) &&
    typeof saved.tasks === 'number' &&
    typeof saved.requests === 'number';
  if (!shapeOk) return { problem: 'a field is missing or of the wrong type' };
  const entry = value as unknown as CacheEntry;
  if (entry.digest !== digestOf(entry)) return { problem: 'its content does not match its digest (edited or damaged)' };
  return { entry };
}
