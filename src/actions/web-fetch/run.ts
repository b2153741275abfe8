import type { EngineContext } from '../../engine/context.js';
import { fromGateway } from '../../engine/failure.js';
import type { WebFetchStep } from '../../plan.js';
import { err, ok } from '../../result.js';
import type { ActionRun, RunnerResult } from '../run-part.js';
import { oneRequest, remoteItem, renderWith } from '../run-kit.js';

type Json = Record<string, unknown>;

/** The step's URLs read through the gateway's tool (the client sends them 20 a request); also what a worker runs. */
export async function runWebFetch(ctx: Pick<EngineContext, 'client'>, input: Json, signal: AbortSignal): RunnerResult {
  const urls = (Array.isArray(input.urls) ? input.urls : [input.urls]).filter(
    (u): u is string => typeof u === 'string' && u.length > 0,
  );
  if (urls.length === 0) return ok({ pages: [], failed: [] });
  const answer = await ctx.client.webFetch(urls, signal);
  if (!answer.ok) return err(fromGateway(answer.error, 'web fetch'));
  return ok({ pages: answer.value.results, failed: answer.value.failed });
}

export const webFetchRun: ActionRun<WebFetchStep> = {
  render: renderWith,
  timedFromSlot: false,
  onWorkers: () => true,
  run: ({ ctx, row, step, index, signal }, input) =>
    ctx.remote?.takes(step)
      ? ctx.remote.action(remoteItem(row, step, index), 'web-fetch', input as Json, signal)
      : runWebFetch(ctx, input as Json, signal),
  cache: oneRequest('web-fetch'),
};
