import { redisPassword, shownRedisUrl } from '../scheduler/redis-url.js';
import { commandName } from './invocation.js';

/** What a run was started with that a resume needs again to reach the same gateway, budget and cache. */
export interface ResumeContext {
  local?: boolean;
  baseUrl?: string;
  toolUrl?: string;
  llmUrl?: string;
  schemaUrl?: string;
  /** `--redis` as given on the command line; PIPELINE_REDIS_URL needs no repeating. */
  redis?: string;
  /** The pace and slots given on the command line: a resume without them would run at the recipe's. */
  rpm?: number | 'auto';
  concurrency?: number;
  queueAhead?: number;
  /** `--out DIR`: without it, the resumed run copies its outputs nowhere. */
  out?: string;
  cacheDir?: string;
  cache?: boolean;
  /** `--cache-remote URL`, or `false` for `--no-cache-remote`. */
  cacheRemote?: string | false;
  /** A read-only run's resume must not write to the bucket: the flag that keeps it from doing so. */
  cacheRemoteReadOnly?: boolean;
  /** `--workers` and `--workers-queue`: a resume without them would run every item in this process. */
  workers?: string;
  workersQueue?: string;
}

/** A shell word: bare when it is safe so, else in single quotes. */
const word = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

/**
 * The command that resumes `runId` with the flags the run was given for its connection, its
 * budget, its pace and its cache, so that pasting it works. Values from the environment are left
 * out (the same shell still has them), and so is the API key. A Redis URL with a password is never
 * printed: REDIS_PASSWORD stands in its place, and a comment says so.
 */
export function resumeCommand(runId: string, flags: ResumeContext, extra: string[] = []): string {
  const words = [commandName(), 'resume', runId];
  if (flags.local) words.push('--local');
  for (const [flag, value] of [
    ['--base-url', flags.baseUrl],
    ['--tool-url', flags.toolUrl],
    ['--llm-url', flags.llmUrl],
    ['--schema-url', flags.schemaUrl],
  ] as const)
    if (value) words.push(flag, word(value));
  if (flags.rpm !== undefined) words.push('--rpm', String(flags.rpm));
  if (flags.concurrency !== undefined) words.push('--concurrency', String(flags.concurrency));
  if (flags.queueAhead !== undefined) words.push('--queue-ahead', String(flags.queueAhead));
  if (flags.out !== undefined) words.push('--out', word(flags.out));
  // A Redis password is never printed, but named for the user to fill in. (It came on the command
  // line: naming PIPELINE_REDIS_URL instead pasted as `--redis ""` where that variable was unset.)
  const masked = [flags.redis, flags.workers].some((url) => url !== undefined && hasPassword(url));
  const redisWord = (url: string) => word(hasPassword(url) ? shownRedisUrl(url, 'REDIS_PASSWORD') : url);
  if (flags.redis) words.push('--redis', redisWord(flags.redis));
  if (flags.workers) words.push('--workers', redisWord(flags.workers));
  if (flags.workersQueue) words.push('--workers-queue', word(flags.workersQueue));
  if (flags.cacheDir) words.push('--cache-dir', word(flags.cacheDir));
  if (flags.cache === false) words.push('--no-cache');
  if (flags.cacheRemote === false) words.push('--no-cache-remote');
  else if (flags.cacheRemote) words.push('--cache-remote', word(flags.cacheRemote));
  if (flags.cacheRemoteReadOnly) words.push('--cache-remote-read-only');
  // A comment, so that the line still pastes: the one word the user must put in.
  const note = masked ? '  # put the Redis password in place of REDIS_PASSWORD' : '';
  return [...words, ...extra].join(' ') + note;
}

/** A URL that carries a password (or does not parse, and may): never printed as it is. */
function hasPassword(url: string): boolean {
  try {
    new URL(url);
  } catch {
    return true;
  }
  return redisPassword(url) !== '';
}

/**
 * Beside a resume command in a GitHub Actions job: the run's journal lives on the runner and goes
 * with it, so the command cannot be followed from a later job. Re-running the job can: the step
 * cache the action restores (and saves after a failed or cancelled run) keeps what was paid for.
 * Empty elsewhere.
 */
export function resumeInCiNote(env: NodeJS.ProcessEnv): string {
  return env.GITHUB_ACTIONS === 'true'
    ? "In a CI job the run's journal goes with the runner: re-run the job instead; the step cache it restores keeps what this run paid for, if the job saves it (the action does).\n"
    : '';
}
