import { join } from 'node:path';

/**
 * A model's entry in the live-schema cache folder. The engine's schema source writes it and offline
 * analysis reads it, so both name it here: the slug with every character outside letters, digits,
 * `.`, `_` and `-` (the `/`, say) written as `--`.
 */
export function schemaCacheFile(cacheDir: string, slug: string): string {
  return join(cacheDir, `${slug.replace(/[^A-Za-z0-9._-]/g, '--')}.json`);
}
