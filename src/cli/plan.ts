import type { Command } from 'commander';
import { formatDuration } from '../duration.js';
import type { PlanEstimate } from '../recipe/estimate.js';
import { UsageError } from './errors.js';
import { collect } from './collect.js';
import { numberFlag } from './flags.js';
import { printError, printJson, printLine, printTable } from './output.js';
import { describeStepCost, describeTotalCost } from './prices.js';

function printText(estimate: PlanEstimate): void {
  const { totals } = estimate;
  printLine(`${estimate.name}: ${estimate.steps.length} steps in ${estimate.layers.length} layers, ${estimate.rows} run${estimate.rows === 1 ? '' : 's'}`);
  printLine();
  printTable(
    ['LAYER', 'STEP', 'ACTION', 'RUNS', 'COST', 'NEEDS'],
    estimate.steps.map((s) => [s.layer + 1, s.id, s.model ?? s.action, s.runs, describeStepCost(s.cost), s.depends_on.join(', ')]),
  );
  printLine();
  const tasks = Object.entries(totals.tasks).map(([slug, n]) => `${n} × ${slug}`);
  const r = totals.requests;
  printLine(`tasks      ${tasks.length ? tasks.join(', ') : 'none'}`);
  printLine(`requests   at least ${r.total}: ${r.submissions} submissions, ${r.polls} polls, ${r.uploads} uploads, ${r.tool_calls} tool calls, ${r.text_calls} text calls${r.dynamic_steps.length ? ` (more for the runs of ${r.dynamic_steps.join(', ')}, known only at run time)` : ''}`);
  printLine(`cost       ${describeTotalCost(totals.cost)}`);
  printLine(`wall time  at least ${formatDuration(totals.least_wall_ms)} at ${totals.assumptions.rpm} requests a minute${totals.assumptions.rpm_source === 'default' ? ' (assumed; the gateway sets it)' : ''} and ${totals.assumptions.concurrency} tasks at once`);
}

export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description('Show what a recipe would do: the DAG in layers, runs per step, tasks per model, the cost, the fewest requests and the least wall time.')
    .argument('<recipe>', 'the recipe file')
    .option('--set <name=value>', 'give an input (repeatable)', collect, [])
    .option('--batch <file>', 'input rows, one run each (.csv or .jsonl)')
    .option('--format <format>', 'text, json or mermaid', 'text')
    .option('--rpm <n>', 'requests per minute to plan for (default: the recipe\'s, else 100)', numberFlag('--rpm', { integer: true, min: 1 }))
    .option('--concurrency <n>', 'tasks in flight to plan for (default: the recipe\'s, else 4)', numberFlag('--concurrency', { integer: true, min: 1 }))
    .option('--prices <file>', 'a YAML or JSON map of model slug to price, over the bundled prices')
    .action(async (recipe: string, flags: { set: string[]; batch?: string; format: string; rpm?: number; concurrency?: number; prices?: string }) => {
      if (!['text', 'json', 'mermaid'].includes(flags.format)) throw new UsageError(`--format must be text, json or mermaid, got ${JSON.stringify(flags.format)}`);
      const [{ loadRecipe }, { formatDiagnostics }, { estimatePlan, toMermaid }] = await Promise.all([import('./load-recipe.js'), import('../recipe/diagnostics.js'), import('../recipe/estimate.js')]);
      const result = loadRecipe(recipe, flags);
      if (!result.ok) {
        printError(formatDiagnostics(result.error));
        process.exitCode = 2;
        return;
      }
      const { runPricing } = await import('./prices.js');
      const pricing = runPricing(result.value, flags.prices);
      const estimate = estimatePlan(result.value, { pricing, ...(flags.rpm ? { rpm: flags.rpm } : {}), ...(flags.concurrency ? { concurrency: flags.concurrency } : {}) });
      if (flags.format === 'json') printJson(estimate);
      else if (flags.format === 'mermaid') printLine(toMermaid(estimate));
      else printText(estimate);
    });
}
