import { CREDENTIAL_VARIABLES } from '../credentials.js';
import { parseRemoteUrl } from '../cache/remote-url.js';
import { parseDuration } from '../duration.js';
import type { PlanSettings } from '../plan.js';
import type { RawRecipe } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { SourceFile } from './source.js';
import { parsePriceTable, pricingOf } from '../model-schemas/prices.js';
import { readBundledSchema, type JsonSchema } from '../model-schemas/bundled.js';

/** What a recipe that says nothing gets. */
export const DEFAULTS = { concurrency: 4, retries: 2, timeoutMs: 30 * 60_000, pollMs: 15_000, backoffMs: 5_000 };

/** The recipe's settings with defaults filled in; a duration that does not read is a diagnostic. */
export function resolveSettings(
  recipe: RawRecipe,
  file: SourceFile,
  diagnostics: Diagnostic[],
  modelSchema: (slug: string) => JsonSchema | undefined = () => undefined,
): PlanSettings {
  const settings = recipe.settings ?? {};
  const duration = (key: 'timeout' | 'poll', fallback: number) => {
    const raw = settings[key];
    if (raw === undefined) return fallback;
    const ms = parseDuration(raw);
    if (ms === undefined)
      diagnostics.push(
        error(file, file.locate(['settings', key]), `settings.${key} must be a duration such as 90s or 15m`),
      );
    return ms ?? fallback;
  };
  const resolved: PlanSettings = {
    concurrency: settings.concurrency ?? DEFAULTS.concurrency,
    queueAhead: settings.queue_ahead ?? 0,
    rpm: settings.rpm ?? 'auto',
    retries: settings.retries ?? DEFAULTS.retries,
    timeoutMs: duration('timeout', DEFAULTS.timeoutMs),
    pollMs: duration('poll', DEFAULTS.pollMs),
    cache: settings.cache ?? true,
    passEnv: settings.pass_env ?? [],
    itemFlow: settings.item_flow ?? true,
  };
  for (const [index, name] of resolved.passEnv.entries())
    if (CREDENTIAL_VARIABLES.has(name))
      diagnostics.push(
        error(
          file,
          file.locate(['settings', 'pass_env', index]),
          `settings.pass_env: ${name} is a credential of pipeline's own and never reaches a command`,
        ),
      );
  if (settings.cache_remote !== undefined) {
    const address = parseRemoteUrl(settings.cache_remote);
    if (address.ok) resolved.cacheRemote = settings.cache_remote;
    else
      diagnostics.push(
        error(file, file.locate(['settings', 'cache_remote']), `settings.cache_remote: ${address.error}`),
      );
  }
  if (settings.max_cost !== undefined) resolved.maxCostUsd = settings.max_cost;
  if (settings.prices !== undefined) {
    const prices = parsePriceTable(
      settings.prices,
      'settings.prices',
      pricingOf(modelSchema, {}, readBundledSchema).rule,
    );
    if (prices.ok) resolved.prices = prices.value;
    else diagnostics.push(error(file, file.locate(['settings', 'prices']), prices.error));
  }
  return resolved;
}
