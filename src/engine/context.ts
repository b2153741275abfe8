import type PQueue from 'p-queue';
import type { GatewayClient } from '../gateway/client.js';
import type { TaskResult } from '../gateway/types.js';
import type { JsonSchema } from '../model-schemas/bundled.js';
import type { Plan } from '../plan.js';
import type { Clock } from '../clock.js';
import type { ReplayedState } from '../store/replay.js';
import type { ReadForecast } from '../scheduler/read-forecast.js';
import type { GatewayPlaces } from '../scheduler/gateway-places.js';
import type { DurationModel } from './durations.js';
import type { EventConsumer } from './events.js';
import type { SpendMeter } from './spend.js';
import type { RunCache } from './run-cache.js';
import type { RemoteItems } from './remote.js';
import type { RowProgress } from './row-admission.js';
import type { Uploads } from './uploads.js';

/** Results that arrive by webhook, for the tasks of this run only. */
export interface WebhookInbox {
  /** The URL to send as X-Webhook-URL: it carries this run's unguessable token. */
  url: string;
  /** Resolves when the task's result is delivered. */
  expect(taskId: string): Promise<TaskResult>;
  forget(taskId: string): void;
}

/** Everything a step runner may use; built once per run by the command line. */
export interface EngineContext {
  plan: Plan;
  client: GatewayClient;
  clock: Clock;
  runId: string;
  runDir: string;
  outputsDir: string;
  /** Caps the tasks in flight: a slot is held from submission until the task ends. */
  tasks: PQueue;
  durations: DurationModel;
  /** With `queue_ahead`: the gateway's places replayed, to foresee when a queued task starts. */
  places?: GatewayPlaces;
  /** Told when each task's reads are due, for the budget to leave room for them. */
  reads?: ReadForecast;
  /** Whether the budget has room no known request needs, now: spare reads go only then. */
  hasSpareRoom?: () => boolean;
  uploads: Uploads;
  /** Generated resources by their gateway URL: where the local copy is, and when the URL expires. */
  downloads: Map<string, { path: string; expiresAt: number | null }>;
  modelSchema: (slug: string) => JsonSchema | undefined;
  /**
   * The run's event stream (src/engine/events.ts): what the engine tells of its work, to every
   * consumer (the journal first, then the console or live view, the log, the GitHub output).
   */
  emit: EventConsumer;
  signal: AbortSignal;
  /** The journal of the run being resumed. */
  resume?: ReplayedState;
  /** On resume, send again the submissions whose outcome is unknown. */
  resubmitUnknown: boolean;
  webhook?: WebhookInbox;
  /** Counts the run's spend before each paid submission; without it nothing is counted or capped. */
  spend?: SpendMeter;
  /**
   * Runs an item's work tagged with `row/step`, so that the command line can count the requests
   * and 429s of each step (through async context: the engine passes no tag down itself).
   */
  withinStep?: <T>(stepKey: string, work: () => Promise<T>) => Promise<T>;
  /** The step cache, unless `--no-cache` or no writable cache folder. */
  cache?: RunCache;
  /** `run --workers`: the items of the steps it takes run on workers (src/workers/). */
  remote?: RemoteItems;
  /**
   * A finished row leaves memory but for its outputs (the journal has the rest), so that a batch's
   * memory does not grow with its rows; without it the run's result keeps each row's step outcomes.
   */
  forgetRows?: boolean;
  /** A batch's row admission, told when a row has a task ready for a slot (src/engine/row-admission.ts). */
  rowProgress?: RowProgress;
  /** The environment expressions see as `env`, without the API key. */
  env: Record<string, string | undefined>;
}
