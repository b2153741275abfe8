import type { GatewayClock } from './clock.js';
import { UPLOAD_LIMIT_BYTES } from '../wire/limits.js';

/** Options of the built-in gateway. Every field is optional; the defaults are those of `pipeline gateway serve`. */
export interface LocalGatewayOptions {
  /** Address to bind. Default `127.0.0.1`. */
  host?: string;
  /** Port to bind; 0 picks a free one. Default 0 (the CLI's default is 8787). */
  port?: number;
  /** API key → team. Default: `local-dev-key` for team `local`. */
  keys?: Record<string, string>;
  /** Requests per window per key, on every authenticated endpoint. Default 100. */
  rpm?: number;
  /** Length of a rate-limit window in seconds. Default 60. */
  windowSeconds?: number;
  /** Tasks running at once per team; more wait in `pending`. Default 10. */
  maxConcurrent?: number;
  /** Multiplies every processing time; 0 finishes tasks as soon as their files are written. Default 1. */
  latencyScale?: number;
  /** Relative spread of processing times (0.2 = ±20 %); 0 makes them fixed. Default 0.2. */
  latencyJitter?: number;
  /** Share of tasks that end `failed`. Default 0. */
  failRate?: number;
  /** Share of authenticated requests answered 500 or 503. Default 0. */
  errorRate?: number;
  /** Starting balance of each team in USD. Default 100. */
  balanceUsd?: number;
  /** Price per unit (image, or second of video) by model slug, in USD; overrides the defaults. */
  prices?: Record<string, number>;
  /** Seconds a finished task's result stays readable. Default 86400. */
  resultTtlSeconds?: number;
  /** Seconds an uploaded file is kept. Default 604800 (7 days). */
  fileTtlSeconds?: number;
  /** Largest upload in bytes. Default 16 MiB. */
  uploadLimitBytes?: number;
  /** Bytes of uploads a team may hold at once. Default 2 GiB. */
  teamQuotaBytes?: number;
  /** Seed of every random choice. Default: a random seed. */
  seed?: number;
  /**
   * Where generated and uploaded files live. A folder given here is the gateway's own: its tasks,
   * uploads and results are kept there and found again by the next gateway started on it.
   * Default: a temporary folder, removed on close.
   */
  dataDir?: string;
  /** Time source. Default: the system clock. */
  clock?: GatewayClock;
  /** Use ffmpeg for video output when one can be had (PATH, else the packaged build). Default true. */
  useFfmpeg?: boolean;
}

export interface ResolvedGatewayOptions {
  host: string;
  port: number;
  keys: Map<string, string>;
  rpm: number;
  windowSeconds: number;
  maxConcurrent: number;
  latencyScale: number;
  latencyJitter: number;
  failRate: number;
  errorRate: number;
  balanceUsd: number;
  prices: Record<string, number>;
  resultTtlSeconds: number;
  fileTtlSeconds: number;
  uploadLimitBytes: number;
  teamQuotaBytes: number;
  seed: number;
  dataDir: string | undefined;
  useFfmpeg: boolean;
}

export const DEFAULT_API_KEY = 'local-dev-key';
export const DEFAULT_TEAM = 'local';

type NumberRule = { min: number; max?: number; integer?: boolean };

function checkNumber(name: string, value: unknown, fallback: number, rule: NumberRule): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`Expected \`${name}\` to be a number, got \`${String(value)}\` (${typeof value})`);
  }
  if (rule.integer && !Number.isInteger(value)) {
    throw new TypeError(`Expected \`${name}\` to be an integer, got \`${value}\``);
  }
  if (value < rule.min || (rule.max !== undefined && value > rule.max)) {
    const range = rule.max === undefined ? `at least ${rule.min}` : `from ${rule.min} to ${rule.max}`;
    throw new TypeError(`Expected \`${name}\` to be ${range}, got \`${value}\``);
  }
  return value;
}

/** Validates options at the door, naming the field, its value and its type. */
export function resolveGatewayOptions(options: LocalGatewayOptions): ResolvedGatewayOptions {
  const keys = new Map(Object.entries(options.keys ?? { [DEFAULT_API_KEY]: DEFAULT_TEAM }));
  if (keys.size === 0) throw new TypeError('Expected `keys` to name at least one API key');
  for (const [key, team] of keys) {
    if (!/^[\x21-\x7e]{1,200}$/.test(key))
      throw new TypeError('Expected every API key to be 1 to 200 printable characters without spaces');
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(team))
      throw new TypeError(`Expected team name to be 1 to 64 letters, digits, '_', '.' or '-', got \`${team}\``);
  }
  for (const [slug, price] of Object.entries(options.prices ?? {})) {
    checkNumber(`prices.${slug}`, price, 0, { min: 0 });
  }
  return {
    host: options.host ?? '127.0.0.1',
    port: checkNumber('port', options.port, 0, { min: 0, max: 65535, integer: true }),
    keys,
    rpm: checkNumber('rpm', options.rpm, 100, { min: 1, integer: true }),
    windowSeconds: checkNumber('windowSeconds', options.windowSeconds, 60, { min: 1, max: 86400, integer: true }),
    maxConcurrent: checkNumber('maxConcurrent', options.maxConcurrent, 10, { min: 1, integer: true }),
    latencyScale: checkNumber('latencyScale', options.latencyScale, 1, { min: 0 }),
    latencyJitter: checkNumber('latencyJitter', options.latencyJitter, 0.2, { min: 0, max: 1 }),
    failRate: checkNumber('failRate', options.failRate, 0, { min: 0, max: 1 }),
    errorRate: checkNumber('errorRate', options.errorRate, 0, { min: 0, max: 1 }),
    balanceUsd: checkNumber('balanceUsd', options.balanceUsd, 100, { min: 0 }),
    prices: options.prices ?? {},
    resultTtlSeconds: checkNumber('resultTtlSeconds', options.resultTtlSeconds, 86400, { min: 1 }),
    fileTtlSeconds: checkNumber('fileTtlSeconds', options.fileTtlSeconds, 7 * 86400, { min: 1 }),
    uploadLimitBytes: checkNumber('uploadLimitBytes', options.uploadLimitBytes, UPLOAD_LIMIT_BYTES, {
      min: 1,
      integer: true,
    }),
    teamQuotaBytes: checkNumber('teamQuotaBytes', options.teamQuotaBytes, 2 * 1024 ** 3, { min: 1, integer: true }),
    seed: checkNumber('seed', options.seed, Math.floor(Math.random() * 2 ** 31), {
      min: 0,
      max: 2 ** 31 - 1,
      integer: true,
    }),
    dataDir: options.dataDir,
    useFfmpeg: options.useFfmpeg ?? true,
  };
}
