/** What the analyzer's parts of several actions share. */
import type { ActionKind } from '../plan.js';

/** A built-in action is named by its kind: `uses: llm`. */
export const namedAs = (kind: ActionKind) => ({
  claims: (uses: string | undefined) => uses === kind,
  usesText: kind,
});

/** Web pages and search results go stale; what a model made for an input does not. */
export const WEB_TTL_MS = 24 * 3_600_000;

/** The step cache's defaults of an action whose outputs do not go stale. */
export const CACHED_FOR_GOOD = { byDefault: true, ttlMs: null } as const;

/** No price: a tool, a text call or a local action is not charged by the gateway. */
export const FREE = () => null;
