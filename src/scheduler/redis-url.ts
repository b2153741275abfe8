/**
 * Redis URLs as the command line takes and prints them. Kept apart from the connection so that a
 * command that only checks a flag does not load the Redis client (a tenth of a second at start).
 */
import { err, ok, type Result } from '../result.js';

/**
 * The password a Redis URL carries, as ioredis reads it: after the colon of its user part
 * (`redis://:secret@host`), or as its `password` query parameter (`redis://host/?password=secret`);
 * '' when none. Decoded, as it is sent.
 */
export function redisPassword(url: string): string {
  try {
    const parsed = new URL(url);
    return decodeURIComponent(parsed.password) || (parsed.searchParams.get('password') ?? '');
  } catch {
    return '';
  }
}

/** A Redis URL as it may be printed: the password, if any (in either place), replaced by `***`. */
export function shownRedisUrl(url: string, mask = '***'): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = mask;
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', mask);
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(a Redis URL that does not parse)';
  }
}

/** Checks a `--redis` value: a `redis://` or `rediss://` URL; the message names where it came from. */
export function checkRedisUrl(url: string, source: string): Result<string, string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return err(`${source} is not a URL (expected redis://[:password@]host[:port][/db] or rediss://…)`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    return err(`${source} must be a redis:// or rediss:// URL, got ${parsed.protocol}//…`);
  }
  if (!parsed.hostname) return err(`${source} names no host: ${shownRedisUrl(url)}`);
  return ok(url);
}
