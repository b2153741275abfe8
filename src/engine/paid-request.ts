import { randomUUID } from 'node:crypto';
import { ok, type Result } from '../result.js';
import type { EngineContext } from './context.js';
import type { StepFailure } from './failure.js';

/** A model item as the paid-request record names it. */
export interface PaidItem {
  row: number;
  step: { id: string };
  index: number;
  slug: string;
  /** `image` or `image[3]`. */
  label: string;
}

/**
 * Before a paid submission can leave (from this process, or from a worker once its job is queued):
 * its price reserved under the run's cap (an item over the cap, or after a 402, is never sent), and
 * `request-sent` on disk, so that a kill from then on leaves a trace of the paid request. Answers the
 * request's id and its price when known.
 */
export async function recordPaidRequest(
  ctx: EngineContext,
  item: PaidItem,
  input: Record<string, unknown>,
): Promise<Result<{ request: string; costUsd: number | undefined }, StepFailure>> {
  const reserved = ctx.spend ? ctx.spend.reserve(item.slug, input, item.label) : ok({} as { costUsd?: number });
  if (!reserved.ok) return reserved;
  const { costUsd } = reserved.value;
  const request = randomUUID();
  await ctx.journal.appendDurable({
    type: 'request-sent',
    row: item.row,
    step: item.step.id,
    index: item.index,
    slug: item.slug,
    request,
    ...(costUsd !== undefined ? { cost_usd: costUsd } : {}),
  });
  return ok({ request, costUsd });
}
