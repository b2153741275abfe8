import { readFileSync } from 'node:fs';
import { readBundledSchema, type JsonSchema } from '../model-schemas/bundled.js';
import { formatUsd, parsePriceTable, pricingOf, type PriceRule, type Pricing } from '../model-schemas/prices.js';
import type { Plan } from '../plan.js';
import type { StepCost, TotalCost } from '../recipe/estimate-cost.js';
import { yamlLibrary } from '../recipe/source.js';
import { resolve } from 'node:path';
import { UsageError } from './errors.js';

/** `--prices FILE`: a YAML or JSON map of model slug to price; anything malformed is a usage error naming the file. */
export function readPriceFile(
  path: string,
  schemaOf: (slug: string) => JsonSchema | undefined,
  cwd: string,
): Record<string, PriceRule> {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch {
    throw new UsageError(`--prices: cannot read ${path}`);
  }
  let value: unknown;
  try {
    // YAML is a superset of JSON: one parser reads both.
    value = yamlLibrary().parse(text);
  } catch (e) {
    // The parser's first line names the place, ending in a colon before the excerpt it adds.
    const first = (e as Error).message.split('\n')[0]!.replace(/:\s*$/, '');
    throw new UsageError(`--prices: ${path} is not YAML or JSON: ${first}`);
  }
  const table = parsePriceTable(value, `--prices ${path}`, pricingOf(schemaOf, {}, readBundledSchema).rule);
  if (!table.ok) throw new UsageError(table.error);
  return table.value;
}

/** The run's prices: the bundled (or cached live) schemas' rules, then `settings.prices`, then `--prices`. */
export function runPricing(
  plan: Plan | undefined,
  pricesFile: string | undefined,
  schemaOf: (slug: string) => JsonSchema | undefined,
  cwd: string,
): Pricing {
  const fromFile = pricesFile ? readPriceFile(pricesFile, schemaOf, cwd) : {};
  return pricingOf(schemaOf, { ...(plan?.settings.prices ?? {}), ...fromFile }, readBundledSchema);
}

/** A step's cost as the plan's table shows it. */
export function describeStepCost(cost: StepCost | null): string {
  if (!cost) return '';
  if (cost.usd === null) return 'price unknown';
  const cached = cost.cached_runs > 0 ? ` (${cost.cached_runs} cached)` : '';
  const atMost = cost.priced_at_most ? 'at most ' : '';
  if (cost.dynamic) return `${atMost}${formatUsd(cost.per_run_usd ?? 0)} × n unknown${cached}`;
  return `${atMost}${formatUsd(cost.usd)}${cached}`;
}

/** The total as one phrase: `$0.1800`, or `at least $0.3400, a lower bound: …` when some of it is not known. */
export function describeTotalCost(total: TotalCost): string {
  const { amount, qualifier } = totalCostParts(total);
  return qualifier ? `${amount}, ${qualifier}` : amount;
}

/**
 * A sentence that an estimate is over a limit: the amount before the verb and what qualifies it
 * after, in brackets, so that the sentence still reads where the estimate is a bound
 * (`the estimated cost at most $0.2100 is over --max-cost $0.0800 (an upper bound: …)`).
 */
export function estimateOver(total: TotalCost, limit: string): string {
  const { amount, qualifier } = totalCostParts(total);
  return `the estimated cost ${amount} is over ${limit}${qualifier ? ` (${qualifier})` : ''}`;
}

/** The total's amount (`at most $0.2100`) and, where it is not exact, what kind of figure it is and why. */
function totalCostParts(total: TotalCost): { amount: string; qualifier?: string } {
  // A price field known only at run time that its schema does not bound is priced at its default: the run may cost more or less.
  const assumed = total.priced_at_defaults
    ? ` (${total.priced_at_defaults.join(', ')} known only at run time: priced at the model's default)`
    : '';
  const upper = upperBoundReasons(total);
  const usd = `${formatUsd(total.usd)}${assumed}`;
  if (!total.lower_bound)
    return upper ? { amount: `at most ${usd}`, qualifier: `an upper bound: ${upper}` } : { amount: usd };
  const lower = lowerBoundReason(total);
  return upper
    ? { amount: `about ${usd}`, qualifier: `not a bound either way: ${lower}; ${upper}` }
    : { amount: `at least ${usd}`, qualifier: `a lower bound: ${lower}` };
}

/**
 * Why an estimate may be more than the run costs: steps whose `if` may not hold, counted as if it
 * always did, and price fields known only at run time, priced at their dearest allowed value.
 */
function upperBoundReasons(total: TotalCost): string | undefined {
  const why: string[] = [];
  const steps = total.conditional_steps;
  if (steps?.length) {
    const named = steps.length === 1 ? `${steps[0]} runs` : `${steps.join(', ')} run`;
    why.push(
      `${named} only where ${steps.length === 1 ? 'its' : 'their'} if holds, counted here as if it always did, up to ${formatUsd(total.conditional_usd ?? 0)}`,
    );
  }
  const dearest = total.priced_at_most;
  if (dearest?.length)
    why.push(
      `${dearest.join(', ')} ${dearest.length === 1 ? 'is' : 'are'} known only at run time, priced at the dearest value the model allows`,
    );
  return why.length ? why.join('; ') : undefined;
}

/** Why an estimate is only a lower bound. */
export function lowerBoundReason(total: TotalCost): string {
  const why: string[] = [];
  if (total.dynamic_steps.length) why.push(`the runs of ${total.dynamic_steps.join(', ')} are known only at run time`);
  if (total.unpriced_models.length) {
    why.push(`price unknown for ${total.unpriced_models.join(', ')} (give one with --prices or settings.prices)`);
  }
  return why.join('; ');
}
