import type { Command } from 'commander';
import { formatUsd } from '../model-schemas/prices.js';
import type { TotalCost } from '../recipe/estimate-cost.js';
import { collectSet } from './flags.js';
import { addConnectionOptions, withConnection, type ConnectionFlags } from './connection.js';
import { printJson, printLine } from './output.js';
import { unwrap } from './unwrap.js';
import { cliIo } from './io.js';
import { plural } from '../format.js';

interface AccountFlags extends ConnectionFlags {
  json?: boolean;
  recipe?: string;
  set: string[];
  batch?: string;
  prices?: string;
}

/** The recipe's estimate, read before the gateway is asked anything: a bad recipe is exit 2 at once. */
async function recipeCost(flags: AccountFlags): Promise<TotalCost | undefined> {
  if (!flags.recipe) return undefined;
  const [{ loadRecipe }, { formatDiagnostics }, { estimatePlan }, { runPricing }, { UsageError }] = await Promise.all([
    import('./load-recipe.js'),
    import('../recipe/diagnostics.js'),
    import('../recipe/estimate.js'),
    import('./prices.js'),
    import('./errors.js'),
  ]);
  const loaded = await loadRecipe(flags.recipe, { set: flags.set, ...(flags.batch ? { batch: flags.batch } : {}) });
  if (!loaded.ok) {
    cliIo().stderr.write(`${formatDiagnostics(loaded.error)}\n`);
    throw new UsageError(`${flags.recipe} is not a valid recipe`);
  }
  return estimatePlan(loaded.value, { pricing: runPricing(loaded.value, flags.prices) }).totals.cost;
}

/** How many runs the balance pays for; `null` when a run costs nothing known. */
const runsPaid = (balance: number, cost: TotalCost) =>
  cost.usd > 0 ? Math.floor(Math.round(balance * 10_000) / Math.round(cost.usd * 10_000)) : null;

function describeRuns(
  recipe: string,
  flags: Pick<AccountFlags, 'batch'>,
  balance: number,
  cost: TotalCost,
  lowerBoundReason: (cost: TotalCost) => string,
): string {
  const runs = runsPaid(balance, cost);
  // With --batch the estimate is of the whole batch: one run of all its rows.
  const what = flags.batch ? 'a run of the batch' : 'a run';
  const price = `${cost.lower_bound ? 'at least ' : ''}${formatUsd(cost.usd)} ${what}`;
  const why = cost.lower_bound ? ` (${lowerBoundReason(cost)})` : '';
  if (runs === null) return `${recipe} costs ${price}${why}: how many runs the balance pays for is not known`;
  const count = `${cost.lower_bound ? 'at most ' : ''}${plural(runs, 'run')}`;
  return `${recipe} costs ${price}${why}: the balance pays for ${count}`;
}

export function registerAccountCommand(program: Command): void {
  addConnectionOptions(
    program
      .command('account')
      .description('Check the API key and show the team balance, and how many runs of a recipe it pays for.'),
  )
    .option('--json', 'print JSON')
    .option('--recipe <file>', 'also say how many runs of this recipe the balance pays for')
    .option('--set <name=value>', 'with --recipe: give an input (repeatable)', collectSet, [])
    .option('--batch <file>', 'with --recipe: input rows, as for run')
    .option('--prices <file>', 'with --recipe: a YAML or JSON map of model slug to price')
    .action(async (flags: AccountFlags) => {
      const cost = await recipeCost(flags);
      await withConnection(flags, async ({ client }) => {
        const account = unwrap(await client.account());
        const balance = account.balanceUsd;
        if (flags.json) {
          const recipe = cost ? { recipe: { path: flags.recipe, cost, runs_paid: runsPaid(balance, cost) } } : {};
          return printJson({ is_valid: account.isValid, team: account.team ?? null, balance_usd: balance, ...recipe });
        }
        printLine(
          `key      ${account.isValid ? 'valid' : 'not valid'}${account.team ? ` (team ${account.team})` : ''}`,
        );
        printLine(`balance  ${formatUsd(balance)}`);
        // Imported on use, as the recipe's analysis is: every command's module loads when the program starts.
        const { lowerBoundReason } = await import('./prices.js');
        if (cost) printLine(`recipe   ${describeRuns(flags.recipe!, flags, balance, cost, lowerBoundReason)}`);
      });
    });
}
