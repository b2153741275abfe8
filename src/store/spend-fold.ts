/**
 * What a run has committed, as the journal's one fold (fold.ts) reads it. A paid submission counts from its
 * `request-sent` line (written before it leaves, with its price), and stops counting when the
 * gateway certainly refused it; one whose outcome is unknown keeps counting, since it may be paid.
 * Refunds of failed tasks are the gateway's business and are not subtracted; what went to tasks that
 * ended failed is counted apart too (`failedUnits`), for the figures to say how much of it that is.
 */
export interface SpendFold {
  /** In ten-thousandths of a USD, so that sums never drift. */
  committedUnits: number;
  byStepUnits: Map<string, number>;
  /** Submissions sent without a known price. */
  unpriced: number;
  /** `row/step/index` → the units of its last request, until the gateway answers. */
  pending: Map<string, number>;
  /** `row/step/index` → the units of a submission the gateway took, until its task ends (tasks in flight only). */
  running: Map<string, number>;
  /** Units of submissions whose task ended failed: a gateway that refunds failed tasks gives them back. */
  failedUnits: number;
  /** Units of submissions whose outcome is unknown (the answer was lost): paid only if the gateway took them. */
  unknownUnits: number;
}

export const emptySpend = (): SpendFold => ({
  committedUnits: 0,
  byStepUnits: new Map(),
  unpriced: 0,
  pending: new Map(),
  running: new Map(),
  failedUnits: 0,
  unknownUnits: 0,
});

const toUnits = (usd: number) => Math.round(usd * 10_000);

function add(spend: SpendFold, step: string, units: number): void {
  spend.committedUnits += units;
  spend.byStepUnits.set(step, (spend.byStepUnits.get(step) ?? 0) + units);
}

export function recordRequest(spend: SpendFold, item: string, step: string, costUsd: number | undefined): void {
  if (costUsd === undefined) {
    spend.unpriced++;
    return;
  }
  const units = toUnits(costUsd);
  spend.pending.set(item, units);
  add(spend, step, units);
}

/** The gateway took the submission: no refusal can follow, and the item's request need not be remembered. */
export function recordAccepted(spend: SpendFold, item: string): void {
  const units = spend.pending.get(item);
  spend.pending.delete(item);
  if (units !== undefined) spend.running.set(item, units);
}

/** The item's task ended: what it cost counts as spent on a failed task if it failed. */
export function recordTaskEnded(spend: SpendFold, item: string, failed: boolean): void {
  const units = spend.running.get(item);
  spend.running.delete(item);
  if (failed && units !== undefined) spend.failedUnits += units;
}

/**
 * The submission's answer was lost: it still counts (it may have been taken, and paid), and is
 * counted apart, for the figures to say that part may not have been charged.
 */
export function recordUnknown(spend: SpendFold, item: string): void {
  const units = spend.pending.get(item);
  spend.pending.delete(item);
  if (units !== undefined) spend.unknownUnits += units;
}

export function recordRefusal(spend: SpendFold, item: string, step: string): void {
  const units = spend.pending.get(item);
  if (units === undefined) return;
  spend.pending.delete(item);
  add(spend, step, -units);
}

/** USD to 4 decimals. */
export const spendUsd = (units: number): number => units / 10_000;
