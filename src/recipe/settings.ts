import { parseDuration } from '../duration.js';
import type { PlanSettings } from '../plan.js';
import type { RawRecipe } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { SourceFile } from './source.js';

/** What a recipe that says nothing gets. */
export const DEFAULTS = { concurrency: 4, retries: 2, timeoutMs: 30 * 60_000, pollMs: 15_000, backoffMs: 5_000 };

/** The recipe's settings with defaults filled in; a duration that does not read is a diagnostic. */
export function resolveSettings(recipe: RawRecipe, file: SourceFile, diagnostics: Diagnostic[]): PlanSettings {
  const settings = recipe.settings ?? {};
  const duration = (key: 'timeout' | 'poll', fallback: number) => {
    const raw = settings[key];
    if (raw === undefined) return fallback;
    const ms = parseDuration(raw);
    if (ms === undefined) diagnostics.push(error(file, file.locate(['settings', key]), `settings.${key} must be a duration such as 90s or 15m`));
    return ms ?? fallback;
  };
  return { concurrency: settings.concurrency ?? DEFAULTS.concurrency, rpm: settings.rpm ?? 'auto', retries: settings.retries ?? DEFAULTS.retries, timeoutMs: duration('timeout', DEFAULTS.timeoutMs), pollMs: duration('poll', DEFAULTS.pollMs), cache: settings.cache ?? true };
}
