import type { RemoteFlags } from '../session/cache-setup.js';
import type { ConnectionFlags } from './connection.js';
import type { MoneyFlags } from './run-money.js';

/** `--rpm`: a cap in requests per minute, or `auto` to follow the gateway's headers even when the recipe sets a cap. */
export type RpmFlag = number | 'auto';

export interface RunFlags extends ConnectionFlags, MoneyFlags, RemoteFlags {
  set: string[];
  batch?: string;
  out?: string;
  concurrency?: number;
  queueAhead?: number;
  rpm?: RpmFlag;
  /** `--redis URL`: the budget and learned durations shared through Redis. */
  redis?: string;
  /** `--workers URL`: the items go to `pipeline worker` processes through BullMQ on this Redis. */
  workers?: string;
  workersQueue?: string;
  webhookUrl?: string;
  webhookListen?: string;
  json?: boolean;
  resubmitUnknown?: boolean;
  /** `run --batch` only: leave out invalid rows and list them. */
  skipInvalidRows?: boolean;
  /** False with `--no-report`: no report.html at the end. */
  report?: boolean;
  /** `resume` only: go on despite unreadable journal lines or changed local files. */
  force?: boolean;
  /** false with `--no-cache`: the step cache is neither read nor written. */
  cache?: boolean;
  /** `--refresh`: the step cache is written, not read. */
  refresh?: boolean;
  cacheDir?: string;
}
