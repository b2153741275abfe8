import type { EngineContext } from '../../engine/context.js';
import { fromGateway } from '../../engine/failure.js';
import type { WebFetchStep } from '../../plan.js';
import { err, ok } from '../../result.js';
import type { ActionRun, RunnerResult } from '../run-part.js';
import { type GatewayCall, gatewayCallRun } from '../run-kit.js';

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

/** A read: safe to make again. */
export const webFetchCall: GatewayCall = { call: runWebFetch, idempotent: true };

export const webFetchRun: ActionRun<WebFetchStep> = gatewayCallRun<WebFetchStep>('web-fetch', webFetchCall);
