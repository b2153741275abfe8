import { expectedMs, kindOf } from '../actions/durations.js';
import { plannerOf } from '../actions/planners.js';
import type { Plan, PlannedStep } from '../plan.js';
import { chosenItemsLabel } from '../item-label.js';
import type { Pricing } from '../model-schemas/prices.js';
import { sumCosts, type StepCost, type TotalCost } from './estimate-cost.js';
import {
  isLocalFile,
  knownInputOf,
  knownItems,
  type RequestCounts,
  type Tally,
  type TaskCounts,
} from './estimate-tally.js';
import { isPerItemDependency } from './plan-edges.js';

/** What `pipeline plan` reports: per step, and the totals of the fewest requests and least wall time. */
export interface PlanEstimate {
  name: string;
  rows: number;
  layers: string[][];
  steps: Array<{
    id: string;
    action: string;
    model: string | null;
    layer: number;
    depends_on: string[];
    /** The step whose items this step's for_each iterates; `per_item`: item i waits for that step's item i only. */
    /**
     * `ancestors_per_item`: steps further up the item's chain whose outcome the step's `if` reads as
     * the item's own ancestor's (`t2i[i]` for an item of `again ← edit ← t2i`), not waited for whole.
     */
    items_from: { step: string; per_item: boolean; because?: string; ancestors_per_item?: string[] } | null;
    /** The items of earlier steps this one waits for, where it reads chosen items only. */
    chosen_items: Array<{ step: string; indices: number[] }>;
    runs: number | 'dynamic';
    runs_per_row: Array<number | 'dynamic'>;
    cached: number;
    cost: StepCost | null;
  }>;
  totals: {
    /** Runs that will come from the step cache: counted in no request, task or time below. */
    cached: number;
    /** Tasks per model slug; `dynamic` when a for_each list is known only at run time. */
    tasks: TaskCounts;
    requests: RequestCounts;
    least_wall_ms: number;
    cost: TotalCost;
    assumptions: {
      rpm: number;
      rpm_source: 'flag' | 'recipe' | 'default';
      concurrency: number;
      expected_ms: Record<string, number>;
    };
  };
}

/**
 * The fewest requests: a submission and one poll per task, one request per tool or text call
 * (web fetch: one per 20 URLs), one upload per distinct local file. The least wall time is the
 * largest of three bounds: requests ÷ rpm; the critical path through the layers, each step taking
 * its expected time once per `concurrency` runs; and task time ÷ concurrency.
 */
export interface EstimateOptions {
  rpm?: number;
  concurrency?: number;
  /** Runs of each step the step cache will answer: they make no request and cost nothing. */
  cached?: ReadonlyMap<string, number>;
  /** Without it every model's price is unknown. */
  pricing?: Pricing;
}

export function estimatePlan(plan: Plan, options: EstimateOptions = {}): PlanEstimate {
  const rpm = options.rpm ?? (typeof plan.settings.rpm === 'number' ? plan.settings.rpm : 100);
  const rpmSource = options.rpm !== undefined ? 'flag' : typeof plan.settings.rpm === 'number' ? 'recipe' : 'default';
  const concurrency = options.concurrency ?? plan.settings.concurrency;
  const tally: Tally = {
    tasks: {},
    requests: { submissions: 0, polls: 0, uploads: 0, tool_calls: 0, text_calls: 0, total: 0, dynamic_steps: [] },
    localFiles: new Set(),
    finish: new Map(),
    firstDone: new Map(),
    taskTimeMs: 0,
  };
  const steps = plan.steps.map((step) => {
    const cached = options.cached?.get(step.id) ?? 0;
    // The step's line, its cost last: set on it rather than spread into a copy, once per step.
    const line: PlanEstimate['steps'][number] = Object.assign(estimateStep(plan, step, concurrency, tally, cached), {
      cost: plannerOf(step).price(plan, step, cached, options.pricing),
    });
    return line;
  });
  const { requests } = tally;
  requests.uploads = tally.localFiles.size;
  requests.total = requests.submissions + requests.polls + requests.uploads + requests.tool_calls + requests.text_calls;
  const criticalPath = largest(tally.finish.values(), 0) * Math.ceil(plan.rows.length / Math.max(1, concurrency));
  const rateBound = (requests.total / rpm) * 60_000;
  const concurrencyBound = tally.taskTimeMs / concurrency;
  const expected: Record<string, number> = {};
  for (const step of plan.steps) expected[kindOf(step)] = expectedMs(kindOf(step));
  return {
    name: plan.name,
    rows: plan.rows.length,
    layers: plan.layers.map((layer) => [...layer]),
    steps,
    totals: {
      cached: steps.reduce((sum, s) => sum + s.cached, 0),
      tasks: tally.tasks,
      requests,
      least_wall_ms: Math.round(Math.max(rateBound, criticalPath, concurrencyBound)),
      cost: sumCosts(steps),
      assumptions: { rpm, rpm_source: rpmSource, concurrency, expected_ms: expected },
    },
  };
}

/**
 * The largest of the values, at least `floor`. A loop, not `Math.max(...values)`: spread arguments
 * go on the stack, and a list with one entry per batch row (over 100,000 of them) overflows it.
 */
function largest(values: Iterable<number>, floor: number): number {
  let most = floor;
  for (const value of values) if (value > most) most = value;
  return most;
}

/** One step's line of the estimate; its requests, local files and finishing time go into the tally. */
function estimateStep(
  plan: Plan,
  step: PlannedStep,
  concurrency: number,
  tally: Tally,
  cached: number,
): Omit<PlanEstimate['steps'][number], 'cost'> {
  const runs = step.runs.filter((r): r is number => r !== 'dynamic').reduce((a, b) => a + b, 0);
  // A step whose `if` is decided at run time may not run at all: the fewest requests and the least
  // time count none of its runs (its cost counts them all, as at most).
  const conditional = step.ifAtRunTime === true;
  const known = conditional ? 0 : runs;
  const dynamic = step.runs.includes('dynamic');
  if (dynamic) tally.requests.dynamic_steps.push(step.id);
  if (conditional) {
    tally.requests.conditional_steps ??= [];
    tally.requests.conditional_steps.push(step.id);
  }
  const each = expectedMs(kindOf(step));
  const toolCalls = tally.requests.tool_calls;
  // A dynamic step's cached runs may be runs of its dynamic rows, not of the known ones: never below none.
  const uncached = Math.max(0, known - cached);
  plannerOf(step).estimate(step, { plan, known: uncached, dynamic, eachMs: each }, tally);
  // A cached tool call is one request fewer (web-fetch counts its calls per row, not per run).
  tally.requests.tool_calls = Math.max(toolCalls, tally.requests.tool_calls - cached);
  // Nothing of it counts in the least requests and time: every known run cached, or its if undecided.
  const nothingSure = conditional || (!dynamic && cached >= known);
  for (const media of nothingSure ? [] : step.mediaFields) {
    for (const [index, row] of plan.rows.entries()) {
      // Each item of a list known before the run: `for_each: ${{ inputs.pictures }}` into `image: [${{ item }}]`.
      const runs = step.runs[index];
      const items = typeof runs === 'number' && runs > 0 ? knownItems(step, row, runs) : undefined;
      for (const item of items ?? [undefined]) {
        const value = knownInputOf(step, row, item)?.[media.field];
        for (const entry of Array.isArray(value) ? value : [value]) if (isLocalFile(entry)) tally.localFiles.add(entry);
      }
    }
  }
  const perRow = largest(
    step.runs.map((r) => (r === 'dynamic' ? 1 : r)),
    1,
  );
  const runMs = nothingSure ? 0 : each;
  const flowsFrom = step.itemsFrom?.perItem ? step.itemsFrom.step : undefined;
  let start = 0;
  // A step that reads chosen items of a dependency starts, at the least, when its first item is done.
  const chosen = (dep: string) => step.chosenItems?.some((c) => c.step === dep);
  for (const dep of step.dependsOn)
    if (dep !== flowsFrom)
      start = Math.max(start, (chosen(dep) ? tally.firstDone.get(dep) : tally.finish.get(dep)) ?? 0);
  if (flowsFrom) {
    // Item by item: the first item starts when the first upstream item is done, and the last one
    // ends no sooner than one run after the last upstream item.
    const first = Math.max(start, tally.firstDone.get(flowsFrom) ?? 0);
    tally.firstDone.set(step.id, first + runMs);
    tally.finish.set(
      step.id,
      Math.max(first + Math.ceil(perRow / concurrency) * runMs, (tally.finish.get(flowsFrom) ?? 0) + runMs),
    );
  } else {
    tally.firstDone.set(step.id, start + runMs);
    tally.finish.set(step.id, start + Math.ceil(perRow / concurrency) * runMs);
  }
  return {
    id: step.id,
    action: step.action,
    model: 'model' in step ? step.model.slug : null,
    layer: step.layer,
    depends_on: [...step.dependsOn],
    items_from: step.itemsFrom
      ? {
          step: step.itemsFrom.step,
          per_item: step.itemsFrom.perItem,
          ...(step.itemsFrom.wholeBecause ? { because: step.itemsFrom.wholeBecause } : {}),
          ...(step.itemsFrom.ancestorsReadPerItem
            ? { ancestors_per_item: [...step.itemsFrom.ancestorsReadPerItem] }
            : {}),
        }
      : null,
    chosen_items: (step.chosenItems ?? []).map(({ step, indices }) => ({ step, indices: [...indices] })),
    runs: dynamic ? ('dynamic' as const) : runs,
    runs_per_row: step.runs,
    cached,
  };
}

/** A Mermaid flowchart of the DAG, one node per step. */
export function toMermaid(estimate: PlanEstimate): string {
  const lines = ['flowchart TD'];
  // Nodes are named by their place in the recipe (s1, s2…) and labelled with the step's id: a step
  // may be called `end`, a word that ends a Mermaid flowchart, or hold a `-`.
  const node = new Map(estimate.steps.map((step, at) => [step.id, `s${at + 1}`]));
  for (const step of estimate.steps) {
    const what = step.model ?? step.action;
    const runs = step.runs === 1 ? '' : ` ×${step.runs}`;
    lines.push(`  ${node.get(step.id)}["${step.id}<br/>${what}${runs}"]`);
  }
  for (const step of estimate.steps)
    for (const dep of step.depends_on) {
      // An item-by-item edge: item i of the step follows item i of dep alone; a chosen-items edge:
      // the step follows those items of dep alone.
      const perItem = isPerItemDependency(step, dep);
      const chosen = step.chosen_items.find((c) => c.step === dep);
      const label = perItem
        ? `${dep}[i] → ${step.id}[i]`
        : chosen
          ? `${chosenItemsLabel(dep, chosen.indices)} → ${step.id}`
          : undefined;
      const [from, to] = [node.get(dep), node.get(step.id)];
      lines.push(label ? `  ${from} -->|"${label}"| ${to}` : `  ${from} --> ${to}`);
    }
  return lines.join('\n');
}
