import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** What identifies a request, whatever run, step or row makes it. */
export interface CacheKeyParts {
  /** `model vendor/slug`, `llm openai gpt-x`, `web-search`, `run`…: the action and what it calls. */
  action: string;
  /** The fully rendered input, with every file already replaced by `{ sha256 }` of its bytes. */
  input: unknown;
  /** The step's `cache.key`, rendered; absent when the recipe gives none. */
  extra?: unknown;
  /**
   * The gateway that answers the request (`local`, or the media API base): the built-in gateway's
   * stand-in images and answers are never served to a run on a real one. Absent for a step that
   * sends nothing (a `run:` command), whose result does not depend on it.
   */
  gateway?: string;
}

/** Bumped when the key's parts or the entry's format change, so old entries stop matching. */
export const CACHE_FORMAT = 2;

/** The entry's key: SHA-256 (hex) over the canonical JSON of the parts. */
export function cacheKey(parts: CacheKeyParts): string {
  const body = {
    format: CACHE_FORMAT,
    action: parts.action,
    input: parts.input,
    extra: parts.extra ?? null,
    ...(parts.gateway !== undefined ? { gateway: parts.gateway } : {}),
  };
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export const isCacheKey = (text: string): boolean => /^[0-9a-f]{64}$/.test(text);
