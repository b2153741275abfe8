import { priceFields, roundUsd, type Pricing } from '../model-schemas/prices.js';
import type { ModelStep, Plan } from '../plan.js';
import { knownItems } from './estimate-tally.js';
import { type KnownItem, knownValue, ownEntry, UNKNOWN } from './known-values.js';

/**
 * A model step's estimated cost. `usd` counts the runs known at plan time (less those a cache
 * answers); `per_run_usd` is one run's price, which is all a dynamic `for_each` can show.
 * Both are `null` when the model's price is unknown: never taken for zero.
 */
export interface StepCost {
  usd: number | null;
  per_run_usd: number | null;
  /** The step's run count is known only at run time: `usd` is a lower bound. */
  dynamic: boolean;
  cached_runs: number;
  /**
   * Fields the model's price depends on (`resolution`, `duration`…) whose values are known only at
   * run time and that its schema bounds (an enum, a maximum): priced at their dearest value, so
   * `usd` is at most. Absent when none.
   */
  priced_at_most?: string[];
  /**
   * Such fields the schema does not bound: priced at the model's defaults, so the run may cost
   * more or less. Absent when none.
   */
  priced_at_defaults?: string[];
  /** The step has an `if`: its runs are counted as if it held for every one, so `usd` is at most. */
  conditional?: boolean;
}

export interface TotalCost {
  /** The sum of the known costs, in USD to 4 decimals. */
  usd: number;
  /** True when a dynamic step or an unknown price means the run may cost more. */
  lower_bound: boolean;
  dynamic_steps: string[];
  /** Models whose price is unknown: give one with --prices or settings.prices. */
  unpriced_models: string[];
  /** `step.field` for each price field known only at run time, priced at its dearest allowed value (see StepCost); absent when none. */
  priced_at_most?: string[];
  /** `step.field` for each price field known only at run time, priced at its default (see StepCost); absent when none. */
  priced_at_defaults?: string[];
  /**
   * Steps with an `if`, counted as if it held for every run: the run may cost less, by up to
   * `conditional_usd` (their part of `usd`). Absent when none.
   */
  conditional_steps?: string[];
  conditional_usd?: number;
}

/**
 * A model's input as far as the plan knows it (values known only at run time take the schema's
 * defaults), and the fields it leaves out that way.
 */
function knownInput(
  step: ModelStep,
  row: Record<string, unknown>,
  item?: KnownItem,
): { known: Record<string, unknown>; atRunTime: string[] } {
  let value: unknown;
  try {
    value = knownValue(step.with, row, item);
  } catch {
    return { known: {}, atRunTime: [] };
  }
  if (typeof value !== 'object' || value === null) return { known: {}, atRunTime: [] };
  const known: Record<string, unknown> = {};
  const atRunTime: string[] = [];
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    if (field === UNKNOWN) atRunTime.push(key);
    else ownEntry(known, key, field);
  }
  return { known, atRunTime };
}

/**
 * The cost line of a model step (tools and text calls are not charged: their actions price nothing). `cached` runs (the step cache answers them) cost nothing; the cache counts them per
 * step, so they are taken off at the step's mean price per known run.
 */
export function priceStep(plan: Plan, step: ModelStep, cached: number, pricing: Pricing | undefined): StepCost {
  const dynamic = step.runs.includes('dynamic');
  let usd = 0;
  let knownRuns = 0;
  let perRun: number | undefined;
  const fields = priceFields(pricing?.rule(step.model.slug));
  const atMost = new Set<string>();
  const atDefaults = new Set<string>();
  for (const [row, inputs] of plan.rows.entries()) {
    const runs = step.runs[row];
    // Each item of a list known before the run priced as itself: `for_each: [1k, 2k]` into
    // `resolution` costs a 1K and a 2K image, not two of the first.
    const items = typeof runs === 'number' && runs > 0 ? knownItems(step, inputs, runs) : undefined;
    for (const item of items ?? [undefined]) {
      const input = knownInput(step, inputs, item);
      const open = input.atRunTime.filter((field) => fields.includes(field));
      // A price field chosen at run time (by an LLM's answer, say) is priced at its dearest value:
      // a run the cap would cut off midway is refused before it pays for work it cannot finish.
      const dearest = open.length > 0 ? pricing?.dearest(step.model.slug, input.known, open) : undefined;
      if (runs !== 0 && dearest)
        for (const field of open) (dearest.unbounded.includes(field) ? atDefaults : atMost).add(field);
      const cost = dearest?.usd ?? pricing?.cost(step.model.slug, input.known);
      if (cost === undefined) return { usd: null, per_run_usd: null, dynamic, cached_runs: cached };
      perRun ??= cost;
      if (typeof runs !== 'number') continue;
      const count = item ? 1 : runs;
      knownRuns += count;
      usd += count * cost;
    }
  }
  const cachedRuns = Math.min(cached, knownRuns);
  const paid = knownRuns === 0 ? 0 : usd * ((knownRuns - cachedRuns) / knownRuns);
  return {
    usd: roundUsd(paid),
    per_run_usd: perRun ?? null,
    dynamic,
    cached_runs: cachedRuns,
    ...(atMost.size > 0 ? { priced_at_most: [...atMost] } : {}),
    ...(atDefaults.size > 0 ? { priced_at_defaults: [...atDefaults] } : {}),
    ...(step.ifAtRunTime ? { conditional: true } : {}),
  };
}

export function sumCosts(steps: Array<{ id: string; model: string | null; cost: StepCost | null }>): TotalCost {
  let usd = 0;
  const dynamic: string[] = [];
  const unpriced = new Set<string>();
  const atMost: string[] = [];
  const atDefaults: string[] = [];
  const conditional: string[] = [];
  let conditionalUsd = 0;
  for (const step of steps) {
    if (!step.cost) continue;
    for (const field of step.cost.priced_at_most ?? []) atMost.push(`${step.id}.${field}`);
    for (const field of step.cost.priced_at_defaults ?? []) atDefaults.push(`${step.id}.${field}`);
    if (step.cost.usd === null) unpriced.add(step.model ?? step.id);
    else usd += step.cost.usd;
    if (step.cost.dynamic) dynamic.push(step.id);
    if (step.cost.conditional && step.cost.usd) {
      conditional.push(step.id);
      conditionalUsd += step.cost.usd;
    }
  }
  return {
    usd: roundUsd(usd),
    lower_bound: dynamic.length > 0 || unpriced.size > 0,
    dynamic_steps: dynamic,
    unpriced_models: [...unpriced].sort(),
    ...(atMost.length > 0 ? { priced_at_most: atMost } : {}),
    ...(atDefaults.length > 0 ? { priced_at_defaults: atDefaults } : {}),
    ...(conditional.length > 0 ? { conditional_steps: conditional, conditional_usd: roundUsd(conditionalUsd) } : {}),
  };
}
