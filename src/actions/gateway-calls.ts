/**
 * The actions that are one call to the gateway, by kind: what a run makes here, and what a worker
 * makes for a run (`src/workers/worker.ts`). A new action of this kind is one more line here.
 */
import type { RemoteAction } from '../engine/remote.js';
import { llmCall } from './llm/run.js';
import type { GatewayCall } from './run-kit.js';
import { webFetchCall } from './web-fetch/run.js';
import { webSearchCall } from './web-search/run.js';

export const gatewayCalls: { [K in RemoteAction]: GatewayCall } = {
  llm: llmCall,
  'web-search': webSearchCall,
  'web-fetch': webFetchCall,
};
