/**
 * The actions that are one call to the gateway, by kind: what a run makes here, and what a worker
 * makes for a run (`src/workers/worker.ts`). A new action of this kind is one more line here.
 */
import type { EngineContext } from '../engine/context.js';
import type { RemoteAction } from '../engine/remote.js';
import { runLlm } from './llm/run.js';
import type { RunnerResult } from './run-part.js';
import { runWebFetch } from './web-fetch/run.js';
import { runWebSearch } from './web-search/run.js';

export interface GatewayCall {
  call(ctx: Pick<EngineContext, 'client'>, input: Record<string, unknown>, signal: AbortSignal): RunnerResult;
  /**
   * Safe to make again: a read such as a search or a fetch. A call that is not (a text generation,
   * paid and answered in one exchange) is recorded before it is sent, and a worker that takes it
   * over from a lost one reports an outcome unknown instead of sending it a second time.
   */
  idempotent: boolean;
}

export const gatewayCalls: { [K in RemoteAction]: GatewayCall } = {
  llm: { call: runLlm, idempotent: false },
  'web-search': { call: runWebSearch, idempotent: true },
  'web-fetch': { call: runWebFetch, idempotent: true },
};
