import { join } from 'node:path';
import { CacheStore } from '../cache/store.js';
import type { Clock } from '../clock.js';
import { RunCache } from '../engine/run-cache.js';

/** The step cache folder: `--cache-dir`, else PIPELINE_CACHE_DIR, else `cache` in the pipeline home. */
export function cacheDir(flag: string | undefined, home: string, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env.PIPELINE_CACHE_DIR ?? join(home, 'cache');
}

/**
 * The run's step cache, or none: with `--no-cache`, with `settings.cache: false` and no step that
 * asks for it, or when the folder cannot be written to. That last is said once, and the run goes
 * on without a cache rather than failing: a cache is an optimisation, never a requirement.
 */
export function openRunCache(
  flags: { cache?: boolean; refresh?: boolean; cacheDir?: string },
  home: string,
  clock: Clock,
  say: (text: string) => void,
): RunCache | undefined {
  if (flags.cache === false) return undefined;
  const dir = cacheDir(flags.cacheDir, home);
  const warned = new Set<string>();
  const warn = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    say(`⚠ ${message}`);
  };
  const store = CacheStore.open(dir, { now: () => clock.now(), warn });
  if (!store.ok) {
    say(`⚠ ${store.error}; running without the step cache`);
    return undefined;
  }
  return new RunCache(store.value, { read: !flags.refresh, write: true }, warn);
}
