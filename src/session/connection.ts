import type { GatewayClient, GatewayEndpoints } from '../gateway/client.js';
import type { DurationStore } from '../expected-durations.js';
import type { RateLimitObservation } from '../gateway/rate-limit-headers.js';
import type { Budget } from '../scheduler/budget-interface.js';
import type { RedisPair } from '../scheduler/redis-connection.js';
import { ReadForecast } from '../scheduler/read-forecast.js';
import { TrafficMeter } from '../engine/traffic.js';
import type { Clock } from '../clock.js';
import { join } from 'node:path';
import type { SessionEnvironment } from './environment.js';
import { UsageError } from './errors.js';
import { gatewayIdentity } from './gateway-identity.js';

/**
 * Which gateway a run talks to. Each address and the key default to their variable
 * (PIPELINE_BASE_URL, PIPELINE_TOOL_URL, PIPELINE_LLM_URL, PIPELINE_SCHEMA_URL, PIPELINE_API_KEY).
 */
export interface GatewayOptions {
  /** Start the built-in gateway in this process, on loopback, and use it (default false). */
  local?: boolean;
  apiKey?: string;
  /** The media API base, ending in /api/v1. */
  baseUrl?: string;
  /** The web tools base (default: the base origin + /tools). */
  toolUrl?: string;
  /** The text gateway base (default: the base origin + /llm). */
  llmUrl?: string;
  /** The origin of the public schema endpoint (default: the base origin). */
  schemaUrl?: string;
}

/** How the budget paces requests: `maxPerMinute` caps them below the gateway's own limit. */
export interface BudgetOptions {
  maxPerMinute?: number;
  /** `--redis` / PIPELINE_REDIS_URL: share the budget and learned durations with every process on the key. */
  redisUrl?: string;
  /** The Redis of `--workers` (a worker's, or a run's that queues its items there): no going on without it. */
  redisHoldsJobs?: boolean;
  /**
   * A command of a few requests (`task get`, `models list`…) shares the budget when Redis answers,
   * and when it does not, warns and goes on with its own: a run would fail rather than start unshared.
   */
  redisOptional?: boolean;
  /** Where learned durations are kept between runs without Redis ($PIPELINE_HOME). */
  home?: string;
}

export interface Connection {
  client: GatewayClient;
  budget: Budget;
  /** The budget is shared through Redis with other processes on the key, which share its running places too. */
  sharedBudget: boolean;
  /** Counts every request sent: the live view's rate and the journal's per-second record. */
  traffic: TrafficMeter;
  /** Told of every gateway answer, after the budget: for counts of requests and 429s. */
  observers: Array<(observation: RateLimitObservation) => void>;
  endpoints: GatewayEndpoints;
  clock: Clock;
  /**
   * Fails at once, with the address, when the gateway cannot be reached or refuses the key;
   * answers the team's balance when it read it (not for --local, which is never checked).
   */
  check(uses?: { tools: boolean; llm: boolean }): Promise<number | undefined>;
  /** Learned task durations of this gateway, from earlier runs (in Redis, or a file under home). */
  durations: DurationStore;
  /** The reads the run's tasks in flight expect to make: the budget keeps room for them (see ReadForecast). */
  reads: ReadForecast;
  /**
   * Which gateway this is, as a run's journal records it: `local` for the built-in one (its port
   * changes each run, its tasks and files are kept under the home), else the media API base
   * without credentials. A resume goes on only against the gateway its run's tasks are on.
   */
  gateway: string;
  close(): Promise<void>;
}

/** The built-in gateway of --local runs five times faster than the hosted one: quick to try, still asynchronous. */
const LOCAL_LATENCY_SCALE = 0.2;

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

function checkUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${name} is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    throw new UsageError(
      `${name} uses plain http on ${url.hostname}; use https (plain http is allowed only for loopback addresses)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${name} must be an https URL, got ${url.protocol}`);
  if (url.username || url.password)
    throw new UsageError(`${name} must not carry credentials; set PIPELINE_API_KEY instead`);
  return url;
}

/** Endpoints and key from flags, then environment; the errors say how to fix each gap. */
export function resolveEndpoints(
  flags: GatewayOptions,
  env: NodeJS.ProcessEnv,
): { endpoints: GatewayEndpoints; apiKey: string } {
  const apiKey = flags.apiKey ?? env.PIPELINE_API_KEY;
  if (!apiKey) {
    throw new UsageError(
      'no API key: set PIPELINE_API_KEY (or pass --api-key), or add --local to use the built-in gateway',
    );
  }
  const baseText = flags.baseUrl ?? env.PIPELINE_BASE_URL;
  if (!baseText)
    throw new UsageError(
      'no gateway address: set PIPELINE_BASE_URL to the media API base (it ends with /api/v1), or add --local',
    );
  // A message names what the user set: the flag when one was given, else the variable.
  const named = (flag: string | undefined, option: string, variable: string) => (flag ? option : variable);
  const baseName = named(flags.baseUrl, '--base-url', 'PIPELINE_BASE_URL');
  const base = checkUrl(baseName, baseText);
  if (!/\/api\/v1\/?$/.test(base.pathname))
    throw new UsageError(`${baseName} must end with /api/v1, got ${JSON.stringify(baseText)}`);
  const origin = base.origin;
  const toolUrl = flags.toolUrl ?? env.PIPELINE_TOOL_URL ?? `${origin}/tools`;
  const llmUrl = flags.llmUrl ?? env.PIPELINE_LLM_URL ?? `${origin}/llm`;
  const schemaUrl = flags.schemaUrl ?? env.PIPELINE_SCHEMA_URL ?? origin;
  checkUrl(named(flags.toolUrl, '--tool-url', 'PIPELINE_TOOL_URL'), toolUrl);
  checkUrl(named(flags.llmUrl, '--llm-url', 'PIPELINE_LLM_URL'), llmUrl);
  checkUrl(named(flags.schemaUrl, '--schema-url', 'PIPELINE_SCHEMA_URL'), schemaUrl);
  return { endpoints: { baseUrl: base.toString().replace(/\/$/, ''), toolUrl, llmUrl, schemaUrl }, apiKey };
}

/** Builds the real client behind one shared budget; with --local, starts the built-in gateway first. */
export async function connect(
  flags: GatewayOptions,
  budgetOptions: BudgetOptions,
  environment: Pick<SessionEnvironment, 'env' | 'clock' | 'home' | 'secrets' | 'warn'>,
): Promise<Connection> {
  const { env, clock, secrets } = environment;
  let endpoints: GatewayEndpoints;
  let apiKey: string;
  let stopLocal: (() => Promise<void>) | undefined;
  let scale = LOCAL_LATENCY_SCALE;
  // What the budget, the gateway check and an optional Redis say on stderr, secrets blanked.
  const warn = (text: string) => environment.warn(secrets.redact(text));
  const redis = budgetOptions.redisUrl
    ? await openSharedRedis(budgetOptions.redisUrl, budgetOptions, secrets, warn)
    : undefined;
  if (flags.local) {
    const { startLocalGateway } = await import('../local-gateway/index.js');
    scale = Number(env.PIPELINE_LOCAL_LATENCY_SCALE ?? LOCAL_LATENCY_SCALE);
    if (!Number.isFinite(scale) || scale < 0)
      throw new UsageError(
        `PIPELINE_LOCAL_LATENCY_SCALE must be a number of at least 0, got ${JSON.stringify(env.PIPELINE_LOCAL_LATENCY_SCALE)}`,
      );
    // Its tasks, uploads and results are kept under the home, so that a resume, or `task get`,
    // in a later process finds them, as it would on the hosted gateway.
    const dataDir = join(budgetOptions.home ?? environment.home, 'local-gateway');
    const gateway = await startLocalGateway({ latencyScale: scale, dataDir, clock });
    endpoints = {
      baseUrl: gateway.baseUrl,
      toolUrl: gateway.toolUrl,
      llmUrl: gateway.llmUrl,
      schemaUrl: gateway.schemaUrl,
    };
    apiKey = gateway.apiKey;
    stopLocal = () => gateway.close();
  } else {
    ({ endpoints, apiKey } = resolveEndpoints(flags, env));
  }
  secrets.register(apiKey);
  const { HttpGatewayClient } = await import('../gateway/client.js');
  const { maxPerMinute } = budgetOptions;
  const reads = new ReadForecast();
  const budget = await makeBudget(
    clock,
    apiKey,
    endpoints.baseUrl,
    redis,
    { ...(maxPerMinute === undefined ? {} : { maxPerMinute }), forecast: reads },
    warn,
  );
  const observers: Connection['observers'] = [];
  const onRateLimit = (observation: RateLimitObservation) => {
    budget.observe(observation);
    for (const observer of observers) observer(observation);
  };
  const traffic = new TrafficMeter(endpoints, clock);
  const client = new HttpGatewayClient({
    endpoints,
    apiKey,
    clock,
    gate: budget,
    onRateLimit,
    onRequest: traffic.record,
  });
  // The built-in gateway's port changes each run; its speed is what the durations depend on.
  const gatewayId = flags.local ? `local gateway, latency scale ${scale}` : endpoints.baseUrl;
  return {
    client,
    budget,
    reads,
    sharedBudget: redis !== undefined,
    observers,
    traffic,
    endpoints,
    clock,
    async check(uses) {
      if (flags.local) return undefined;
      const { checkGateway } = await import('./preflight.js');
      const calls = uses ?? { tools: false, llm: false };
      return checkGateway(endpoints, apiKey, clock, flags, calls, { gate: budget, onRateLimit, warn });
    },
    durations: await durationStore(gatewayId, redis, budgetOptions.home),
    gateway: gatewayIdentity(Boolean(flags.local), endpoints.baseUrl),
    async close() {
      await client.close();
      await budget.close();
      await redis?.pair.close();
      await stopLocal?.();
    },
  };
}

/**
 * Connects to Redis at the start. When it cannot (a bad URL, nothing there, a refused password),
 * a command for which Redis is optional warns and goes on without it; any other stops (exit 2),
 * naming the URL without its password.
 */
async function openSharedRedis(
  url: string,
  options: BudgetOptions,
  secrets: Pick<SessionEnvironment['secrets'], 'register'>,
  warn: (text: string) => void,
): Promise<{ pair: RedisPair; shownUrl: string } | undefined> {
  const [{ openRedis }, { checkRedisUrl, redisPassword, shownRedisUrl }] = await Promise.all([
    import('../scheduler/redis-connection.js'),
    import('../scheduler/redis-url.js'),
  ]);
  const refused = (reason: string, fix: string) => {
    if (!options.redisOptional) throw new UsageError(`${reason}${fix}`);
    warn(`warning: ${reason}; this command keeps its own budget`);
    return undefined;
  };
  const checked = checkRedisUrl(url, '--redis (or PIPELINE_REDIS_URL)');
  if (!checked.ok) return refused(checked.error, '');
  // As given and as sent: a message may quote either.
  const password = redisPassword(url);
  for (const form of [password, encodeURIComponent(password), new URL(url).password]) secrets.register(form);
  const opened = await openRedis(url);
  if (opened.ok) return { pair: opened.value, shownUrl: shownRedisUrl(url) };
  // Redis answered, and refused the password: starting it is not the fix.
  if (opened.error.includes('refused the password')) return refused(opened.error, '');
  const fix = options.redisHoldsJobs
    ? "; start Redis: the workers' jobs are queued there"
    : '; start Redis, or run without --redis (and PIPELINE_REDIS_URL) to keep the budget in this process';
  return refused(opened.error, fix);
}

async function makeBudget(
  clock: Clock,
  apiKey: string,
  baseUrl: string,
  redis: { pair: RedisPair; shownUrl: string } | undefined,
  options: { maxPerMinute?: number; forecast: ReadForecast },
  warn: (text: string) => void,
): Promise<Budget> {
  if (!redis) {
    const { RateBudget } = await import('../scheduler/budget.js');
    return new RateBudget({ clock, ...options });
  }
  const [{ RedisBudget }, { budgetScope }] = await Promise.all([
    import('../scheduler/redis-budget.js'),
    import('../scheduler/redis-connection.js'),
  ]);
  return new RedisBudget({
    clock,
    redis: redis.pair,
    scope: budgetScope(apiKey, baseUrl),
    shownUrl: redis.shownUrl,
    warn,
    ...options,
  });
}

/** Learned durations in Redis when it is shared, else in a file under home (none without a home). */
async function durationStore(
  gatewayId: string,
  redis: { pair: RedisPair } | undefined,
  home: string | undefined,
): Promise<DurationStore> {
  if (redis) {
    const { RedisDurations } = await import('../scheduler/redis-durations.js');
    return new RedisDurations(redis.pair, gatewayId);
  }
  if (home) {
    const { DurationFile } = await import('../store/duration-file.js');
    return new DurationFile(home, gatewayId);
  }
  return { load: async () => ({}), record: () => {}, flush: async () => {} };
}
