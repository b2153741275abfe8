import type { FastifyRequest } from 'fastify';
import type { Accounts } from './accounts.js';
import type { BlobStore } from './blob-store.js';
import type { GatewayClock } from './clock.js';
import type { FaultPlan } from './faults.js';
import type { FileRegistry } from './files.js';
import type { BodyValidator } from './input-validation.js';
import type { ServedModel } from './model-catalog.js';
import type { ResolvedGatewayOptions } from './options.js';
import type { GatewayRandom } from './random.js';
import type { RateLimiter } from './rate-limit.js';
import type { GatewayStats } from './stats.js';
import type { TaskManager } from './tasks.js';
import type { ToolLog } from './tools/tool-log.js';
import type { WebTools } from './tools/web-tools.js';

/** Everything a route needs, built once per gateway. */
export interface GatewayContext {
  options: ResolvedGatewayOptions;
  clock: GatewayClock;
  random: GatewayRandom;
  accounts: Accounts;
  blobs: BlobStore;
  files: FileRegistry;
  tasks: TaskManager;
  models: Map<string, ServedModel>;
  validator: BodyValidator;
  rateLimiter: RateLimiter;
  stats: GatewayStats;
  faults: FaultPlan;
  web: WebTools;
  toolLog: ToolLog;
  /** `http://host:port`, known once the server listens. */
  origin(): string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The team of the request's API key; set by the auth hook on every authenticated route. */
    team?: string;
    /** The route as the stats name it, such as `POST /api/v1/{provider}/{model_id}`. */
    routeKey: string;
  }
}

/** The team of an authenticated request; routes behind the auth hook always have one. */
export function teamOf(request: FastifyRequest): string {
  if (request.team === undefined) throw new Error('Internal error: a route behind the auth hook ran without a team');
  return request.team;
}
