import { formatUsd } from '../model-schemas/prices.js';
import { type RunCost, type RunSummary, spendFigures } from '../store/summary.js';
import { type ResumeContext, resumeCommand, resumeInCiNote } from './resume-hint.js';
import { cliIo } from './io.js';
import { itemLabel } from '../item-label.js';

/** The money flags of `run` and `resume`. */
export interface MoneyFlags {
  cache?: boolean;
  refresh?: boolean;
  cacheDir?: string;
  maxCost?: number;
  prices?: string;
  yes?: boolean;
  confirmAbove?: number;
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
  if (!reasons.has('spend-cap') && !reasons.has('insufficient-balance')) return;
  cliIo().stderr.write(resumeInCiNote(cliIo().env));
  // The commands above leave them failed again: a resume sends such a submission only when told to.
  const unknown = summary.steps.filter((s) => s.error?.outcome_unknown).map((s) => itemLabel(s, summary.rows));
  if (unknown.length > 0)
    cliIo().stderr.write(
      `${unknown.join(', ')} ended with an outcome unknown (a submission whose answer was lost): that resume leaves ${unknown.length === 1 ? 'it' : 'them'} failed. ` +
        "Check the team's tasks and balance, and add --resubmit-unknown to send them again\n",
    );
}
