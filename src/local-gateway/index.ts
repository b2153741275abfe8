import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Accounts } from './accounts.js';
import { BlobStore, type BlobRecord } from './blob-store.js';
import type { FastifyInstance } from 'fastify';
import { systemClock, type GatewayClock } from './clock.js';
import type { GatewayContext } from './context.js';
import { FaultPlan, parseFault, type Fault } from './faults.js';
import { FileRegistry, type FileRecord } from './files.js';
import { BodyValidator } from './input-validation.js';
import { loadServedModels } from './model-catalog.js';
import { resolveGatewayOptions, type LocalGatewayOptions, type ResolvedGatewayOptions } from './options.js';
import { GatewayRandom } from './random.js';
import { RateLimiter } from './rate-limit.js';
import { DiskRecords, NoRecords, type Records } from './records.js';
import { buildServer } from './server.js';
import { GatewayStats, type GatewayStatsSnapshot } from './stats.js';
import { TaskManager, type TaskRecord } from './tasks.js';
import { ToolLog } from './tools/tool-log.js';
import { WebTools } from './tools/web-tools.js';
import { WebhookSender } from './webhooks.js';

export type { LocalGatewayOptions } from './options.js';
export type { GatewayClock, GatewayTimer } from './clock.js';
export type { Fault } from './faults.js';
export type { GatewayStatsSnapshot } from './stats.js';

/** A running local gateway. */
export interface LocalGateway {
  /** Media API base, ending in `/api/v1`. */
  baseUrl: string;
  /** Web tools base: `{toolUrl}/v1/web-search`. */
  toolUrl: string;
  /** Text gateway base: `{llmUrl}/v1/chat/completions`. */
  llmUrl: string;
  /** Origin of the public schema endpoint `/models/{provider}/{model_id}/api_schema`. */
  schemaUrl: string;
  /** The first configured key. */
  apiKey: string;
  /** Where generated and uploaded files live. */
  dataDir: string;
  stats(): GatewayStatsSnapshot;
  injectFault(fault: Fault): void;
  /**
   * Requests received and not yet answered (or dropped). A test on a manual clock reads it to
   * tell that nothing is in flight before it moves time on.
   */
  inFlight(): number;
  /** Resolves once every task submitted so far has ended (its timers must be able to fire). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export class PortInUseError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`port ${port} on ${host} is already in use; pick another with --port, or 0 for a free one`);
  }
}

/** Where a gateway keeps its tasks, uploads and result files between processes; nowhere for a temporary folder. */
function recordsIn(dataDir: string, kept: boolean) {
  const folder = <T>(name: string): Records<T> =>
    kept ? new DiskRecords<T>(join(dataDir, 'records', name)) : new NoRecords<T>();
  return { tasks: folder<TaskRecord>('tasks'), files: folder<FileRecord>('files'), blobs: folder<BlobRecord>('blobs') };
}

/** Every part of a gateway, wired once; `origin` is filled in once the server listens. */
function buildContext(
  resolved: ResolvedGatewayOptions,
  clock: GatewayClock,
  dataDir: string,
  records: ReturnType<typeof recordsIn>,
  originOf: () => string,
) {
  const random = new GatewayRandom(resolved.seed);
  const stats = new GatewayStats();
  const blobs = new BlobStore(dataDir, clock, random, records.blobs);
  const accounts = new Accounts(resolved.keys, resolved.balanceUsd);
  const models = loadServedModels();
  const validator = new BodyValidator();
  for (const model of models.values()) validator.add(model.slug, model.schema);
  const webhooks = new WebhookSender(clock, stats);
  const ctx: GatewayContext = {
    options: resolved,
    clock,
    random,
    accounts,
    blobs,
    files: new FileRegistry(clock, random, blobs, resolved.teamQuotaBytes, records.files, originOf),
    tasks: new TaskManager(resolved, clock, random, accounts, blobs, stats, webhooks, originOf, records.tasks),
    models,
    validator,
    rateLimiter: new RateLimiter(clock, resolved.rpm, resolved.windowSeconds),
    stats,
    faults: new FaultPlan(),
    web: new WebTools(clock, random, originOf),
    toolLog: new ToolLog(clock, random),
    origin: originOf,
  };
  return { ctx, webhooks };
}

/** What an earlier gateway on the same data folder left: the expired part goes, the uploads come back. */
async function takeBackState(ctx: GatewayContext): Promise<void> {
  await ctx.tasks.prune();
  await ctx.blobs.prune(ctx.options.resultTtlSeconds * 1000);
  await ctx.files.load();
}

/** `http://host:port` of a listening server, with a wildcard address made one a client can reach. */
function originOfServer(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === 'string')
    throw new Error('Internal error: the gateway is not listening on a TCP port');
  const wildcardV6 = address.address === '::' ? '::1' : address.address;
  const host =
    address.family === 'IPv6' ? `[${wildcardV6}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  return `http://${host}:${address.port}`;
}

/** Starts the built-in gateway on loopback (or `options.host`) and resolves once it listens. */
export async function startLocalGateway(options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  const resolved = resolveGatewayOptions(options);
  const ownsDataDir = resolved.dataDir === undefined;
  const dataDir = resolved.dataDir ?? (await mkdtemp(join(tmpdir(), 'pipeline-gateway-')));
  await mkdir(dataDir, { recursive: true });
  let origin = '';
  const records = recordsIn(dataDir, !ownsDataDir);
  for (const folder of Object.values(records)) folder.removeLeftovers();
  const { ctx, webhooks } = buildContext(resolved, options.clock ?? systemClock, dataDir, records, () => origin);
  if (!ownsDataDir) await takeBackState(ctx);
  const app = await buildServer(ctx);
  let inFlight = 0;
  app.server.on('request', (_request, response) => {
    inFlight++;
    // 'close' follows the answer, and also a connection closed without one.
    response.once('close', () => inFlight--);
  });
  try {
    await app.listen({ host: resolved.host, port: resolved.port });
  } catch (error) {
    await app.close();
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
    if ((error as { code?: string }).code === 'EADDRINUSE') throw new PortInUseError(resolved.host, resolved.port);
    throw error;
  }
  origin = originOfServer(app);
  const [apiKey] = resolved.keys.keys();
  return {
    baseUrl: `${origin}/api/v1`,
    toolUrl: `${origin}/tools`,
    llmUrl: `${origin}/llm`,
    schemaUrl: origin,
    apiKey: apiKey!,
    dataDir,
    stats: () => ctx.stats.snapshot(ctx.accounts.allBalancesUsd()),
    injectFault: (fault) => ctx.faults.add(parseFault(fault)),
    inFlight: () => inFlight,
    settle: () => ctx.tasks.settle(),
    async close() {
      ctx.tasks.close();
      await app.close();
      await webhooks.drain();
      if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
