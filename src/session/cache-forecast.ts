import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { plannerOf } from '../actions/planners.js';
import { CacheStore } from '../cache/store.js';
import { withoutCredentials } from '../credentials.js';
import type { Plan } from '../plan.js';
import { cacheDir, openRemoteTier, type RemoteFlags, remoteChoice } from './cache-setup.js';
import type { SessionEnvironment } from './environment.js';
import type { CacheForecast, CacheLookup } from './plan-cache.js';

/** No cache to ask: only a plan of local `run:` commands sends the gateway nothing. */
export const uncachedForecast = (plan: Plan): CacheForecast => ({
  cached: new Map(),
  sendsNothing: plan.steps.every((step) => !plannerOf(step).sendsRequests),
});

/**
 * What the step cache holds of the plan's runs: the local cache folder, then the remote cache when
 * one is set (its entries only: a plan downloads no file); nothing when there is neither. A damaged
 * entry is a warning through `warn`: a run passes a quiet one, since the run that follows meets the
 * same entry and says so itself (once, not twice).
 */
export async function cacheForecastOf(
  plan: Plan,
  flags: { cache?: boolean; cacheDir?: string } & RemoteFlags,
  environment: Pick<SessionEnvironment, 'env' | 'cwd' | 'home' | 'clock' | 'secrets'>,
  warn: (message: string) => void,
  /** The gateway the run would send to (`local`, or the media API base; see gatewayIdentity), when known. */
  gateway: string | undefined,
): Promise<CacheForecast> {
  if (flags.cache === false) return uncachedForecast(plan);
  const { env, clock, home, secrets } = environment;
  const dir = resolve(environment.cwd, cacheDir(flags.cacheDir, home, env));
  const now = () => clock.now();
  const store = existsSync(dir) ? CacheStore.open(dir, { now, warn }) : undefined;
  const local = store?.ok ? store.value : undefined;
  const choice = remoteChoice(flags, plan.settings.cacheRemote, env);
  const remote = choice.ok && choice.value ? openRemoteTier(choice.value, { now, warn }, env, secrets) : undefined;
  // The keys the folder holds, listed once: a key it lacks is a miss without a file read each (a
  // plan of 10,000 steps spent a third of a second on those), and an empty folder is no cache at all.
  const stored = local ? await local.storedKeys() : undefined;
  if (!remote && (!stored || (stored.size === 0 && plan.rows.length > 0))) return uncachedForecast(plan);
  // Only with a cache to ask: the forecast renders inputs as the runners do, and loads them all.
  const { forecastFromCache } = await import('./plan-cache.js');
  /**
   * A local entry the run could restore: every file it names still in the folder at its size (a
   * deleted or cut blob is a miss). Sizes, not hashes: the forecast reads no file's bytes; a blob
   * damaged at its size is found when the run restores it, and the item runs.
   */
  const whole = async (key: string, maxAgeMs: number | null) => {
    const entry = stored?.has(key) ? await local?.get(key, maxAgeMs) : undefined;
    if (!entry || !local) return undefined;
    for (const file of entry.files) {
      const size = (await stat(local.blobs.pathOf(file.sha256)).catch(() => undefined))?.size;
      if (size !== file.bytes) return undefined;
    }
    return entry;
  };
  const lookup: CacheLookup = {
    // An entry counted cached that the run cannot restore would let --max-cost pass a run it then cuts off.
    get: async (key, maxAgeMs) => (await whole(key, maxAgeMs)) ?? (await remote?.getEntry(key, maxAgeMs)),
    // The forecast reads no file's bytes (the entry gives their hash): the path only names the file.
    blobPath: (sha256) => local?.blobs.pathOf(sha256) ?? `remote blob ${sha256}`,
  };
  return forecastFromCache(plan, lookup, withoutCredentials(env), gateway);
}
