/**
 * Redis URLs as the command line takes and prints them. Kept apart from the connection so that a
 * command that only checks a flag does not load the Redis client (a tenth of a second at start).
 */
import { err, ok, type Result } from '../result.js';

/** A Redis URL as it may be printed: the password, if any, replaced by `***`. */
export function shownRedisUrl(url: string, mask = '***'): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = mask;
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
