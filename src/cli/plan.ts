import type { Command } from 'commander';
import type { Plan } from '../plan.js';
import type { RemoteFlags } from '../session/cache-setup.js';
import type { CacheForecast } from '../session/plan-cache.js';
import { formatDuration } from '../duration.js';
import { plural } from '../format.js';
import { chosenItemsLabel } from '../item-label.js';
import type { PlanEstimate } from '../recipe/estimate.js';
import { isPerItemDependency } from '../recipe/plan-edges.js';
import { UsageError } from './errors.js';
import { collectSet, numberFlag } from './flags.js';
import { printError, printJson, printLine, printTable } from './output.js';
import type { describeStepCost, describeTotalCost } from './prices.js';
import { checkSkipInvalidRows, rowOptions, SKIP_INVALID_ROWS_HELP, skippedRowsWarning } from './skipped-rows.js';
import { setExitCode } from './io.js';

// Every command's module is loaded when the program starts: what only `plan` needs (the analyzer,
// the cache, schemas, YAML) is imported when it runs, so that `validate` and `--help` start quickly.

/**
 * `badge[i] ← bg[i]` for an item-by-item step; `collage ← all of bg (…)` for one that iterates a
 * whole step; `branded ← hero[0]` for one that reads chosen items.
 */
function describeLineage(step: PlanEstimate['steps'][number]): string[] {
  const lines = step.chosen_items.map(({ step: from, indices }) => `${step.id} ← ${chosenItemsLabel(from, indices)}`);
  const from = step.items_from;
  if (!from) return lines;
  // An item that flows still waits for the whole of every other step it needs (`needs: [qa]`).
  // Not its ancestors whose outcome an item's `if` reads: it reads its own lineage's (again[i] ← edit[i] ← t2i[i]).
  const notWhole = new Set([from.step, ...step.chosen_items.map((c) => c.step), ...(from.ancestors_per_item ?? [])]);
  const whole = step.depends_on.filter((dep) => !notWhole.has(dep));
  const alsoAfter = whole.length > 0 ? `, after all of ${whole.join(', ')}` : '';
  return [
    from.per_item
      ? `${step.id}[i] ← ${from.step}[i]${alsoAfter}`
      : `${step.id}[i] ← ${from.step}[i], after all of ${from.step}${from.because ? ` (${from.because})` : ''}`,
    ...lines,
  ];
}

/** A dependency in the NEEDS column: `bg[i]` item by item, `hero[0]` for chosen items, else the step. */
function neededAs(step: PlanEstimate['steps'][number], dep: string): string {
  if (isPerItemDependency(step, dep)) return `${dep}[i]`;
  const chosen = step.chosen_items.find((c) => c.step === dep);
  return chosen ? chosenItemsLabel(dep, chosen.indices) : dep;
}

function printText(
  estimate: PlanEstimate,
  plan: Plan,
  describe: { describeStepCost: typeof describeStepCost; describeTotalCost: typeof describeTotalCost },
): void {
  const { describeStepCost, describeTotalCost } = describe;
  const { totals } = estimate;
  printLine(
    `${estimate.name}: ${plural(estimate.steps.length, 'step')} in ${plural(estimate.layers.length, 'layer')}, ${plural(estimate.rows, 'run')}`,
  );
  printLine();
  // The CACHED column appears only when the step cache holds some of the runs.
  const cached = totals.cached > 0;
  printTable(
    ['LAYER', 'STEP', 'ACTION', 'RUNS', ...(cached ? ['CACHED'] : []), 'COST', 'NEEDS'],
    estimate.steps.map((s) => [
      s.layer + 1,
      s.id,
      s.model ?? s.action,
      s.runs,
      ...(cached ? [s.cached] : []),
      describeStepCost(s.cost),
      s.depends_on.map((dep) => neededAs(s, dep)).join(', '),
    ]),
  );
  printLine();
  const lineages = estimate.steps.flatMap(describeLineage);
  if (lineages.length > 0) {
    printLine(`items      ${lineages.join('; ')}`);
    printLine();
  }
  if (cached) printLine(`cached     ${plural(totals.cached, 'run')} from the step cache, not counted below`);
  const tasks = Object.entries(totals.tasks)
    .filter(([, n]) => n !== 0)
    .map(([slug, n]) => `${n} × ${slug}`);
  const r = totals.requests;
  // Steps whose `if` is decided at run time are left out of tasks, requests and time: they may not run.
  const besides = (steps: readonly string[]) =>
    steps.length
      ? `, besides the runs of ${steps.join(', ')} where ${steps.length === 1 ? 'its' : 'their'} if holds`
      : '';
  const conditional = r.conditional_steps ?? [];
  const modelSteps = new Set(estimate.steps.filter((s) => s.model !== null).map((s) => s.id));
  printLine(
    `tasks      ${tasks.length ? tasks.join(', ') : 'none'}${besides(conditional.filter((id) => modelSteps.has(id)))}`,
  );
  printLine(
    `requests   at least ${r.total}: ${plural(r.submissions, 'submission')}, ${plural(r.polls, 'poll')}, ${plural(r.uploads, 'upload')}, ${plural(r.tool_calls, 'tool call')}, ${plural(r.text_calls, 'text call')}${r.dynamic_steps.length ? ` (more for the runs of ${r.dynamic_steps.join(', ')}, known only at run time)` : ''}${besides(conditional)}`,
  );
  printLine(`cost       ${describeTotalCost(totals.cost)}`);
  printLine(
    `wall time  at least ${formatDuration(totals.least_wall_ms)} at ${totals.assumptions.rpm} requests a minute${totals.assumptions.rpm_source === 'default' ? ' (assumed; the gateway sets it)' : ''} and ${totals.assumptions.concurrency} tasks at once`,
  );
  const leftOut = [...new Set((plan.skippedRows ?? []).map((s) => s.where))];
  if (leftOut.length > 0)
    printLine(`left out   ${plural(leftOut.length, 'row')} (--skip-invalid-rows): ${leftOut.join(', ')}`);
}

const printWarning = (message: string) => printError(`warning: ${message}`);

/**
 * What the step cache holds of the plan's runs (the local folder, then the remote cache when one is
 * set); a damaged entry is a warning on stderr.
 */
async function cacheForecastOf(
  plan: Plan,
  flags: { cache?: boolean; cacheDir?: string; local?: boolean } & RemoteFlags,
): Promise<CacheForecast> {
  const [{ cacheForecastOf: forecast }, { sessionEnvironment }, { expectedGateway }] = await Promise.all([
    import('../session/cache-forecast.js'),
    import('./session-environment.js'),
    import('../session/gateway-identity.js'),
  ]);
  const environment = sessionEnvironment();
  // Entries are kept by gateway: the built-in one's stand-ins are never a hosted run's.
  return forecast(plan, flags, environment, printWarning, expectedGateway(flags, environment.env));
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'Show what a recipe would do: the DAG in layers, runs per step, tasks per model, the cost, the fewest requests and the least wall time.',
    )
    .argument('<recipe>', 'the recipe file')
    .option('--set <name=value>', 'give an input (repeatable)', collectSet, [])
    .option('--batch <file>', 'input rows, one run each (.csv, or .jsonl / .ndjson)')
    .option('--format <format>', 'text, json or mermaid (default: text)')
    .option('--json', 'print JSON: the same as --format json')
    .option(
      '--rpm <n>',
      "requests per minute to plan for (default: the recipe's, else 100)",
      numberFlag('--rpm', { integer: true, min: 1 }),
    )
    .option(
      '--concurrency <n>',
      "tasks in flight to plan for (default: the recipe's, else 4)",
      numberFlag('--concurrency', { integer: true, min: 1 }),
    )
    .option('--cache-dir <dir>', 'the step cache to look in (default: $PIPELINE_CACHE_DIR, else $PIPELINE_HOME/cache)')
    .option('--no-cache', 'count every run, as a run with --no-cache or --refresh makes them')
    .option(
      '--local',
      "count what the step cache holds for a --local run (else for the gateway at $PIPELINE_BASE_URL): each gateway's entries are its own",
    )
    .option(
      '--cache-remote <url>',
      'the remote step cache to look in too, s3://bucket/prefix (default: $PIPELINE_CACHE_REMOTE, else settings.cache_remote)',
    )
    .option('--no-cache-remote', "look in no remote step cache, not even the recipe's settings.cache_remote")
    .option('--prices <file>', 'a YAML or JSON map of model slug to price, over the bundled prices')
    .option('--skip-invalid-rows', `${SKIP_INVALID_ROWS_HELP}; only the rest are planned and priced`)
    .action(
      async (
        recipe: string,
        flags: {
          set: string[];
          batch?: string;
          format?: string;
          json?: boolean;
          rpm?: number;
          concurrency?: number;
          cache?: boolean;
          cacheDir?: string;
          cacheRemote?: string | false;
          local?: boolean;
          prices?: string;
          skipInvalidRows?: boolean;
        },
      ) => {
        checkSkipInvalidRows(flags);
        if (flags.json && flags.format !== undefined && flags.format !== 'json')
          throw new UsageError(`--json asks for --format json; it cannot go with --format ${flags.format}`);
        const format = flags.json ? 'json' : (flags.format ?? 'text');
        if (!['text', 'json', 'mermaid'].includes(format))
          throw new UsageError(`--format must be text, json or mermaid, got ${JSON.stringify(format)}`);
        const [{ loadRecipe }, { diagnosticJson, formatDiagnostics }, { estimatePlan, toMermaid }] = await Promise.all([
          import('./load-recipe.js'),
          import('../recipe/diagnostics.js'),
          import('../recipe/estimate.js'),
        ]);
        const result = await loadRecipe(recipe, rowOptions(flags));
        if (!result.ok) {
          // A script that reads the JSON gets the problems as validate --json gives them, not an empty stdout.
          if (format === 'json') printJson({ valid: false, diagnostics: result.error.map(diagnosticJson) });
          printError(formatDiagnostics(result.error));
          const { annotateDiagnostics } = await import('./github-actions.js');
          annotateDiagnostics(result.error);
          setExitCode(2);
          return;
        }
        const { cached } = await cacheForecastOf(result.value, flags);
        const prices = await import('./prices.js');
        const { runPricing } = prices;
        const pricing = runPricing(result.value, flags.prices);
        const estimate = estimatePlan(result.value, {
          ...(flags.rpm ? { rpm: flags.rpm } : {}),
          ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
          cached,
          pricing,
        });
        const warning = skippedRowsWarning(result.value);
        if (warning) printError(warning);
        const skipped = flags.skipInvalidRows ? { skipped_rows: result.value.skippedRows ?? [] } : {};
        if (format === 'json') printJson({ ...estimate, ...skipped });
        else if (format === 'mermaid') printLine(toMermaid(estimate));
        else printText(estimate, result.value, prices);
      },
    );
}
