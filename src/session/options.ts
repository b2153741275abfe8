import type { Clock } from '../clock.js';
import type { Reporter } from '../engine/reporter.js';
import type { RateLimitObservation } from '../gateway/rate-limit-headers.js';
import type { GatewayOptions } from './connection.js';

/** `rpm`: a cap in requests per minute, or `auto` to follow the gateway's headers even when the recipe sets a cap. */
export type RpmOption = number | 'auto';

/** The step cache a run reads and writes. */
export interface CacheOptions {
  /** False: the step cache is neither read nor written, every step runs (default true). */
  enabled?: boolean;
  /** Run every step again and store the results (default false). */
  refresh?: boolean;
  /** The cache folder (default: $PIPELINE_CACHE_DIR, else `cache` in the pipeline home). */
  dir?: string;
  /** A remote cache, s3://bucket/prefix; false for none, not even the recipe's (default: $PIPELINE_CACHE_REMOTE, else `settings.cache_remote`). */
  remote?: string | false;
  /** Read the remote cache, never write it (default false, or $PIPELINE_CACHE_REMOTE_READ_ONLY). */
  remoteReadOnly?: boolean;
}

/** What the live view's footer reads of a run's traffic. */
export interface RunTraffic {
  /** Requests sent in the last minute. */
  perMinute(): number;
  /** 429 answers so far. */
  readonly rateLimited: number;
  /** The cap the run keeps to, else the limit the gateway announces. */
  limit(): number | undefined;
  /** Calls `listener` with every gateway answer's status (and the wait a 429 asks for). */
  observe(listener: (answer: RateLimitObservation) => void): void;
}

/**
 * How a run is made, typed and checked once: the command line builds these from its flags, a Node
 * script writes them. Every field is optional; the defaults are the command line's.
 */
export interface RunOptions {
  /** The gateway (default: PIPELINE_BASE_URL and PIPELINE_API_KEY; `{ local: true }` starts the built-in one). */
  gateway?: GatewayOptions;
  /** Inputs as `name=value`, as `--set` gives them (default none). */
  set?: string[];
  /** Input rows, one run each: a .csv with a header row, or a .jsonl (default: one row of `set`). */
  batch?: string;
  /** Leave out the batch rows that do not check and run the rest (default false: one bad row stops the run). */
  skipInvalidRows?: boolean;
  /** Tasks in flight at once (default: the recipe's `settings.concurrency`, else 4). */
  concurrency?: number;
  /**
   * Tasks submitted beyond `concurrency`, to wait in the gateway's own queue (default: the recipe's
   * `settings.queue_ahead`, else 0).
   */
  queueAhead?: number;
  /** Requests per minute (default: the recipe's `settings.rpm`, else the gateway's headers). */
  rpm?: RpmOption;
  /** Share the rate budget and learned durations through this Redis (default: $PIPELINE_REDIS_URL). */
  redisUrl?: string;
  /** Queue the items on this Redis (BullMQ) for `pipeline worker` processes (default: run them here). */
  workers?: { url: string; queue?: string };
  /** Results arrive by webhook at `listen` (host:port), forwarded from `url` when given (default: polling). */
  webhook?: { listen: string; url?: string };
  /** The most the run may commit, in USD (default: `settings.max_cost`, else no cap). */
  maxCostUsd?: number;
  /** A YAML or JSON map of model slug to price, over the bundled prices and `settings.prices`. */
  pricesFile?: string;
  cache?: CacheOptions;
  /** Write report.html in the run folder as the run ends (default true). */
  report?: boolean;
  /** Copy the outputs of a run that succeeded into this folder under stable names (default: no copy). */
  out?: string;
  /** `resume` only: send again the submissions whose outcome is unknown (default false: they may exist already). */
  resubmitUnknown?: boolean;
  /** `resume` only: go on despite unreadable journal lines or changed local files (default false). */
  force?: boolean;
  /** Start even when the estimate is over the team's balance or `confirmAboveUsd`, without asking (default false). */
  yes?: boolean;
  /** Ask `confirm` before a run estimated over this many USD (default 5). */
  confirmAboveUsd?: number;
  /** Asked before a run estimated over `confirmAboveUsd`; a false answer does not start it (default: never asked). */
  confirm?: (question: string) => Promise<boolean>;
  /** What shows the run as it goes, made once the gateway is connected (default: nothing is shown). */
  reporter?: (traffic: RunTraffic) => Reporter;
  /**
   * Keep each row's step outcomes in the session's result (`result.rows`), and count the gateway's
   * answers by row and step (`counts.traffic`), to the end: what the GitHub job summary lists (default
   * false: a finished row leaves memory but for its outputs, so that a batch's memory does not grow with it).
   */
  keepRowOutcomes?: boolean;
  /** Aborted: no new submissions; tasks in flight stay in the journal for a resume (the run ends `interrupted`). */
  signal?: AbortSignal;
  /** The variables the run reads (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The folder relative paths are relative to (default process.cwd()). */
  cwd?: string;
  /** The clock its waits go through (default the system's; tests pass a manual one). */
  clock?: Clock;
  /** Where runs, the cache and learned durations are kept (default: $PIPELINE_HOME, else .pipeline in `cwd`). */
  home?: string;
  /** Warnings for people (default: written to stderr). */
  warn?: (text: string) => void;
}
