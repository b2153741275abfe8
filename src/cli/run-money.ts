import { createInterface } from 'node:readline/promises';
import { formatUsd, type Pricing } from '../model-schemas/prices.js';
import type { Plan } from '../plan.js';
import { estimatePlan } from '../recipe/estimate.js';
import type { TotalCost } from '../recipe/estimate-cost.js';
import { type RunCost, type RunSummary, spendFigures } from '../store/summary.js';

import type { Connection } from './connection.js';
import { GatewayRefusal, UsageError } from './errors.js';
import type { RemoteFlags } from './cache-setup.js';
import { cacheForecastOf, uncachedForecast } from './plan.js';
import { describeTotalCost, runPricing } from './prices.js';
import { type ResumeContext, resumeCommand } from './resume-hint.js';
import { cliIo } from './io.js';

/** The money flags of `run` and `resume`. */
export interface MoneyFlags extends RemoteFlags {
  cache?: boolean;
  refresh?: boolean;
  cacheDir?: string;
  maxCost?: number;
  prices?: string;
  yes?: boolean;
  confirmAbove?: number;
}

/** What a run knows of its money before it starts: its prices, its estimate and its cap. */
export interface RunMoney {
  pricing: Pricing;
  estimate: TotalCost;
  capUsd?: number;
  /** The step cache serves every step the gateway would see: the run sends it nothing at all. */
  sendsNothing: boolean;
}

export const DEFAULT_CONFIRM_ABOVE_USD = 5;

/** `--max-cost` wins over `settings.max_cost`. */
const capOf = (plan: Plan, flags: MoneyFlags) => flags.maxCost ?? plan.settings.maxCostUsd;

function capSource(plan: Plan, flags: MoneyFlags): string {
  return flags.maxCost !== undefined ? '--max-cost' : `settings.max_cost of ${plan.recipePath}`;
}

/**
 * The checks that need no gateway, made before anything is sent: a cap cannot be held for a model
 * whose price is unknown, and a run whose known estimate is over its cap does not start.
 */
export async function moneyBeforeStart(plan: Plan, flags: MoneyFlags, resuming: boolean): Promise<RunMoney> {
  const pricing = runPricing(plan, flags.prices);
  // Runs the step cache holds cost nothing; with --refresh every step runs again.
  const useCache = flags.cache !== false && !flags.refresh;
  const { cached, sendsNothing } = useCache
    ? await cacheForecastOf(
        plan,
        {
          ...(flags.cacheDir ? { cacheDir: flags.cacheDir } : {}),
          ...(flags.cacheRemote !== undefined ? { cacheRemote: flags.cacheRemote } : {}),
        },
        () => {},
      )
    : uncachedForecast(plan);
  const estimate = estimatePlan(plan, { pricing, cached }).totals.cost;
  const capUsd = capOf(plan, flags);
  const money: RunMoney = { pricing, estimate, sendsNothing, ...(capUsd !== undefined ? { capUsd } : {}) };
  if (capUsd === undefined) return money;
  const source = capSource(plan, flags);
  if (estimate.unpriced_models.length > 0) {
    throw new UsageError(
      `${source} cannot be held: the price of ${estimate.unpriced_models.join(', ')} is unknown. ` +
        'Give one with --prices FILE or settings.prices; nothing was sent',
    );
  }
  // A resume is checked as it goes: part of the estimate is already paid.
  if (!resuming && estimate.usd > capUsd) {
    throw new UsageError(
      `the estimated cost ${describeTotalCost(estimate)} is over ${source} ${formatUsd(capUsd)}; nothing was sent`,
    );
  }
  return money;
}

/**
 * Reads the team's balance first: a run whose known estimate is over it does not start without
 * --yes, and on a terminal a run estimated over --confirm-above asks first (never off a terminal).
 */
export async function checkBalance(
  connection: Connection,
  money: RunMoney,
  flags: MoneyFlags,
  knownBalance?: number,
): Promise<number> {
  const balance = knownBalance ?? (await readBalance(connection));
  const estimate = money.estimate.usd;
  if (flags.yes) return balance;
  if (estimate > balance) {
    throw new UsageError(
      `the estimated cost ${describeTotalCost(money.estimate)} is over the team's balance ${formatUsd(balance)}. ` +
        'Recharge, or pass --yes to start anyway (submissions stop at the first 402); nothing was sent',
    );
  }
  const threshold = flags.confirmAbove ?? DEFAULT_CONFIRM_ABOVE_USD;
  if (estimate > threshold && cliIo().stdin.isTTY && cliIo().stderr.isTTY) {
    const estimated = `This run is estimated at ${describeTotalCost(money.estimate)}`;
    const asked = `${estimated}; the balance is ${formatUsd(balance)}. Start it? [y/N] `;
    const lines = createInterface({ input: cliIo().stdin, output: cliIo().stderr });
    const answer = await lines.question(asked).finally(() => lines.close());
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('not started; nothing was sent');
  }
  return balance;
}

async function readBalance(connection: Connection): Promise<number> {
  const account = await connection.client.account();
  if (!account.ok) throw new GatewayRefusal(account.error, 'reading the team balance');
  return account.value.balanceUsd;
}

/** The end of the console's final line: `spent $0.5200 of an estimated $0.5200`. */
export const spentPhrase = (cost: RunCost): string => `spent ${spendFigures(cost)}`;

/** After a 402 or the spending cap: what to do, and the resume command that goes on. */
export function writeMoneyAdvice(summary: RunSummary, runId: string, flags: ResumeContext): void {
  const reasons = new Set(summary.steps.map((s) => s.error?.reason));
  if (reasons.has('insufficient-balance')) {
    cliIo().stderr.write(
      "The team's balance ran out: no submission was sent after the gateway's 402. " +
        `Recharge, then:\n  ${resumeCommand(runId, flags)}\n`,
    );
  }
  if (reasons.has('spend-cap')) {
    cliIo().stderr.write(
      `The run reached its spending cap after committing ${formatUsd(summary.cost.committed_usd)}. ` +
        'To go on, with a higher cap:\n' +
        `  ${resumeCommand(runId, flags, ['--max-cost', 'USD'])}\n`,
    );
  }
}
