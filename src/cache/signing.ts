import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { CacheEntry } from './entry.js';

const SCHEME = 'hmac-sha256:';

/**
 * The signature of an entry: HMAC-SHA256 with the signing key over the canonical JSON of the whole
 * entry (its key, outputs, files' hashes and digest), so that neither a value, a file nor the key
 * it is stored under can change without the key's holder signing again.
 */
export function signEntry(entry: CacheEntry, signingKey: string): string {
  return SCHEME + createHmac('sha256', signingKey).update(canonicalJson(entry)).digest('hex');
}

/** Whether `signature` is the entry's under this key, compared in constant time. */
export function signatureMatches(entry: CacheEntry, signature: unknown, signingKey: string): boolean {
  if (typeof signature !== 'string') return false;
  const expected = Buffer.from(signEntry(entry, signingKey));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
