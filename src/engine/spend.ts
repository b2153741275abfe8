import { formatUsd, type Pricing } from '../model-schemas/prices.js';
import { err, ok, type Result } from '../result.js';
import { stepFailure, type StepFailure } from './failure.js';

/**
 * The run's money, counted before each paid submission. A submission's price is committed before
 * it leaves and released only when the gateway certainly refused it, so no pair of submissions in
 * flight together can pass the cap. After a 402 the team has no money left: nothing more is sent.
 */
export class SpendMeter {
  /** In ten-thousandths of a USD, so that sums never drift. */
  private committedUnits: number;
  private balanceMessage: string | undefined;

  constructor(
    private readonly pricing: Pricing,
    private readonly options: { capUsd?: number; committedUsd?: number },
  ) {
    this.committedUnits = Math.round((options.committedUsd ?? 0) * 10_000);
  }

  get committedUsd(): number {
    return this.committedUnits / 10_000;
  }

  /**
   * Commits the price of one submission, or says why it may not be sent. The answer's `costUsd` is
   * what to journal and what `release` gives back; `undefined` when the model's price is unknown.
   */
  reserve(slug: string, input: Record<string, unknown>, label: string): Result<{ costUsd?: number }, StepFailure> {
    if (this.balanceMessage !== undefined) {
      const message =
        `${label} was not sent: the gateway refused an earlier submission for lack of balance ` +
        `(${this.balanceMessage}). Recharge the team's balance, then resume the run (the command is printed when it ends)`;
      return err(stepFailure('insufficient-balance', message));
    }
    const cost = this.pricing.cost(slug, input);
    if (cost === undefined) return ok({});
    const units = Math.round(cost * 10_000);
    const cap = this.options.capUsd;
    if (cap !== undefined && this.committedUnits + units > Math.round(cap * 10_000)) {
      const message =
        `${label} was not sent: it costs ${formatUsd(cost)} and the run has committed ` +
        `${formatUsd(this.committedUsd)} of its cap of ${formatUsd(cap)}. ` +
        'To go on, resume the run with a higher --max-cost (the command is printed when the run ends)';
      return err(stepFailure('spend-cap', message));
    }
    this.committedUnits += units;
    return ok({ costUsd: cost });
  }

  /** The gateway certainly refused the submission: its price was not paid. */
  release(costUsd: number | undefined): void {
    if (costUsd !== undefined) this.committedUnits -= Math.round(costUsd * 10_000);
  }

  /** A 402: from now on nothing is submitted; tasks already in flight go on. */
  stopForBalance(message: string): void {
    this.balanceMessage ??= message;
  }

  get stoppedForBalance(): boolean {
    return this.balanceMessage !== undefined;
  }
}
