/** What one answer said about the key's request budget (X-RateLimit-*, Retry-After). */
export interface RateLimitObservation {
  /** HTTP status of the answer. */
  status: number;
  /** When the answer arrived, on the client's clock. */
  observedAt: number;
  limit?: number;
  remaining?: number;
  /** When the window resets, Unix milliseconds. */
  resetAt?: number;
  /** From Retry-After or the reset, on a 429. */
  retryAfterMs?: number;
}

/** Receives every observation; the scheduler's budget subscribes. */
export type RateLimitListener = (observation: RateLimitObservation) => void;

type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function integer(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*-?\d+\s*$/.test(text)) return undefined;
  return Number(text);
}

/**
 * Reads the rate-limit headers. `X-RateLimit-Reset` is meant as Unix seconds; a value below
 * 10^11 is read as seconds, a larger one as milliseconds, and a small one (under a day) as seconds
 * from now, which some gateways send.
 */
export function parseRateLimit(status: number, headers: HeaderBag, now: number): RateLimitObservation {
  const observation: RateLimitObservation = { status, observedAt: now };
  const limit = integer(header(headers, 'x-ratelimit-limit'));
  const remaining = integer(header(headers, 'x-ratelimit-remaining'));
  const reset = integer(header(headers, 'x-ratelimit-reset'));
  if (limit !== undefined && limit >= 0) observation.limit = limit;
  if (remaining !== undefined && remaining >= 0) observation.remaining = remaining;
  if (reset !== undefined && reset >= 0)
    observation.resetAt = reset < 86_400 ? now + reset * 1000 : reset < 1e11 ? reset * 1000 : reset;
  const retryAfter = header(headers, 'retry-after');
  const retrySeconds = integer(retryAfter);
  if (retrySeconds !== undefined && retrySeconds >= 0) observation.retryAfterMs = retrySeconds * 1000;
  else if (retryAfter && !Number.isNaN(Date.parse(retryAfter)))
    observation.retryAfterMs = Math.max(0, Date.parse(retryAfter) - now);
  else if (status === 429 && observation.resetAt !== undefined)
    observation.retryAfterMs = Math.max(0, observation.resetAt - now);
  return observation;
}
