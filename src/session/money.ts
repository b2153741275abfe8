import { formatUsd, type Pricing } from '../model-schemas/prices.js';
import type { Plan } from '../plan.js';
import { estimatePlan } from '../recipe/estimate.js';
import type { TotalCost } from '../recipe/estimate-cost.js';
import { cacheForecastOf, uncachedForecast } from './cache-forecast.js';
import type { Connection } from './connection.js';
import { expectedGateway } from './gateway-identity.js';
import type { SessionEnvironment } from './environment.js';
import { GatewayRefusal, UsageError } from './errors.js';
import type { RunOptions } from './options.js';
import { describeTotalCost, estimateOver, runPricing } from './prices.js';
import { offlineSchemas } from './recipe.js';

/** What a run knows of its money before it starts: its prices, its estimate and its cap. */
export interface RunMoney {
  pricing: Pricing;
  estimate: TotalCost;
  capUsd?: number;
  /** The step cache serves every step the gateway would see: the run sends it nothing at all. */
  sendsNothing: boolean;
}

export const DEFAULT_CONFIRM_ABOVE_USD = 5;

type MoneyOptions = Pick<
  RunOptions,
  'maxCostUsd' | 'pricesFile' | 'cache' | 'yes' | 'confirmAboveUsd' | 'confirm' | 'gateway'
>;

/** `maxCostUsd` (`--max-cost`) wins over `settings.max_cost`. */
const capOf = (plan: Plan, options: MoneyOptions) => options.maxCostUsd ?? plan.settings.maxCostUsd;

function capSource(plan: Plan, options: MoneyOptions): string {
  return options.maxCostUsd !== undefined ? '--max-cost' : `settings.max_cost of ${plan.recipePath}`;
}

/**
 * The checks that need no gateway, made before anything is sent: a cap cannot be held for a model
 * whose price is unknown, and a run whose known estimate is over its cap does not start.
 */
export async function moneyBeforeStart(
  plan: Plan,
  options: MoneyOptions,
  environment: SessionEnvironment,
  resuming: boolean,
): Promise<RunMoney> {
  const pricing = runPricing(plan, options.pricesFile, offlineSchemas(environment.home), environment.cwd);
  const cache = options.cache ?? {};
  // Runs the step cache holds cost nothing; with refresh every step runs again.
  const useCache = cache.enabled !== false && !cache.refresh;
  const { cached, sendsNothing } = useCache
    ? await cacheForecastOf(
        plan,
        {
          ...(cache.dir ? { cacheDir: cache.dir } : {}),
          ...(cache.remote !== undefined ? { cacheRemote: cache.remote } : {}),
        },
        environment,
        () => {},
        expectedGateway(options.gateway ?? {}, environment.env),
      )
    : uncachedForecast(plan);
  const estimate = estimatePlan(plan, { pricing, cached }).totals.cost;
  const capUsd = capOf(plan, options);
  const money: RunMoney = { pricing, estimate, sendsNothing, ...(capUsd !== undefined ? { capUsd } : {}) };
  if (capUsd === undefined) return money;
  const source = capSource(plan, options);
  if (estimate.unpriced_models.length > 0) {
    throw new UsageError(
      `${source} cannot be held: the price of ${estimate.unpriced_models.join(', ')} is unknown. ` +
        'Give one with --prices FILE or settings.prices; nothing was sent',
    );
  }
  // A resume is checked as it goes: part of the estimate is already paid. Steps whose `if` may not
  // hold count in full: a run that could pass the cap is refused for nothing, where one started and
  // cut off at the cap would have paid for work it cannot finish.
  if (!resuming && estimate.usd > capUsd) {
    throw new UsageError(`${estimateOver(estimate, `${source} ${formatUsd(capUsd)}`)}; nothing was sent`);
  }
  return money;
}

/**
 * Reads the team's balance first: a run whose known estimate is over it does not start without
 * `yes`, and a run estimated over `confirmAboveUsd` asks `confirm` first (when there is one to ask).
 */
export async function checkBalance(
  connection: Connection,
  money: RunMoney,
  options: MoneyOptions,
  knownBalance?: number,
): Promise<number> {
  const balance = knownBalance ?? (await readBalance(connection));
  const estimate = money.estimate.usd;
  if (options.yes) return balance;
  if (estimate > balance) {
    throw new UsageError(
      `${estimateOver(money.estimate, `the team's balance ${formatUsd(balance)}`)}. ` +
        'Recharge, or pass --yes to start anyway (submissions stop at the first 402); nothing was sent',
    );
  }
  const threshold = options.confirmAboveUsd ?? DEFAULT_CONFIRM_ABOVE_USD;
  if (estimate > threshold && options.confirm) {
    const asked = `This run's estimate: ${describeTotalCost(money.estimate)}. The balance is ${formatUsd(balance)}. Start it? [y/N] `;
    if (!(await options.confirm(asked))) throw new UsageError('not started; nothing was sent');
  }
  return balance;
}

async function readBalance(connection: Connection): Promise<number> {
  const account = await connection.client.account();
  if (!account.ok) throw new GatewayRefusal(account.error, 'reading the team balance');
  return account.value.balanceUsd;
}
