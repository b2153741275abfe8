import { fromGateway } from '../../engine/failure.js';
import type { WebSearchRequest } from '../../gateway/client.js';
import type { WebSearchStep } from '../../plan.js';
import { err, ok } from '../../result.js';
import type { EngineContext } from '../../engine/context.js';
import type { ActionRun, RunnerResult } from '../run-part.js';
import { type GatewayCall, gatewayCallRun } from '../run-kit.js';

type Json = Record<string, unknown>;

/** One search through the gateway's tool; also what a worker runs. */
export async function runWebSearch(ctx: Pick<EngineContext, 'client'>, input: Json, signal: AbortSignal): RunnerResult {
  const answer = await ctx.client.webSearch(input as unknown as WebSearchRequest, signal);
  if (!answer.ok) return err(fromGateway(answer.error, 'web search'));
  return ok({ results: answer.value.results, answer: answer.value.answer });
}

/** A read: safe to make again. */
export const webSearchCall: GatewayCall = { call: runWebSearch, idempotent: true };

export const webSearchRun: ActionRun<WebSearchStep> = gatewayCallRun<WebSearchStep>('web-search', webSearchCall);
