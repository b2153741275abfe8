import type { Pricing } from '../model-schemas/prices.js';
import type { Plan } from '../plan.js';
import * as session from '../session/prices.js';
import { offlineSchemas } from './load-recipe.js';
import { cliIo } from './io.js';

export { describeStepCost, describeTotalCost, lowerBoundReason } from '../session/prices.js';

/** The run's prices: the bundled (or cached live) schemas' rules, then `settings.prices`, then `--prices`. */
export function runPricing(
  plan: Plan | undefined,
  pricesFile: string | undefined,
  schemaOf = offlineSchemas(),
): Pricing {
  return session.runPricing(plan, pricesFile, schemaOf, cliIo().cwd);
}
