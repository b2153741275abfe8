import { type Clock, sleep } from '../clock.js';
import type { GatewayClient } from '../gateway/client.js';
import { abortedFailure, type GatewayFailure } from '../gateway/failures.js';
import type { TaskResult } from '../gateway/types.js';
import { formatDuration } from '../duration.js';
import { err, ok, type Result } from '../result.js';

/** When to read a task: the first wait, then waits growing by half up to a ceiling. */
export interface PollSchedule {
  /** Milliseconds before the first read. */
  firstDelayMs: number;
  /** The wait after the first read that finds the task still running. */
  intervalMs: number;
  /** The longest wait between two reads. */
  maxIntervalMs: number;
  /**
   * From this clock time on, each wait is half as long again as the one before; until then the
   * waits stay even (a first guess is checked at even steps up to the guess).
   */
  growFrom: number;
  /** With webhooks: resolves when the result arrives; reads become a slow safety net. */
  delivered?: Promise<TaskResult>;
  /** How long after the call a task still running is given up on (a `timeout` failure). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface Waited {
  result: TaskResult;
  polls: number;
}

/**
 * The schedule for a task the engine submitted. Once the model's time is learned, the first poll
 * comes when a typical task is done (a standard deviation past the mean), later ones back off from
 * a fifth of that time. Before anything is learned the first guess may be far off either way, so
 * polls come every quarter of it until it has passed, and back off from there. With a webhook the
 * first poll waits three times as long: it is only there in case the delivery is lost.
 */
export function modelTaskSchedule(
  now: number,
  task: {
    expectedMs: number;
    firstPollMs: number | undefined;
    submittedAt: number;
    maxIntervalMs: number;
    webhook: boolean;
  },
): Omit<PollSchedule, 'delivered' | 'signal'> {
  const { expectedMs, firstPollMs, submittedAt, maxIntervalMs } = task;
  const learned = firstPollMs !== undefined;
  const firstAt = task.webhook ? expectedMs * 3 : (firstPollMs ?? expectedMs / 4);
  return {
    firstDelayMs: Math.max(200, submittedAt + Math.round(firstAt) - now),
    intervalMs: Math.max(1000, Math.round(expectedMs / (learned ? 5 : 4))),
    maxIntervalMs,
    growFrom: learned ? Number.NEGATIVE_INFINITY : submittedAt + expectedMs,
  };
}

/** The schedule for a task read by id (`pipeline task wait`): at once, then 2 s growing by half to 15 s. */
export const byIdSchedule = (): Omit<PollSchedule, 'timeoutMs' | 'signal'> => ({
  firstDelayMs: 0,
  intervalMs: 2000,
  maxIntervalMs: 15_000,
  growFrom: Number.NEGATIVE_INFINITY,
});

/**
 * Waits for a task to end, spending as few reads of the budget as the schedule allows; every read
 * goes through the client's gate, so it keeps within the rate limit. A failed read, a stop of the
 * signal (`aborted`) and a passed deadline (`timeout`) come back as failures.
 */
export async function waitForTask(
  client: GatewayClient,
  clock: Clock,
  taskId: string,
  schedule: PollSchedule,
): Promise<Result<Waited, GatewayFailure>> {
  const { signal, delivered, timeoutMs } = schedule;
  const deadline = timeoutMs === undefined ? undefined : clock.now() + timeoutMs;
  let polls = 0;
  let delay = schedule.firstDelayMs;
  let interval = schedule.intervalMs;
  for (;;) {
    const arrived = await pause(clock, delay, signal, delivered);
    if (!arrived.ok) return arrived;
    if (arrived.value) return ok({ result: arrived.value, polls });
    const read = await client.task(taskId, signal);
    polls++;
    if (!read.ok) return read;
    const task = read.value;
    if (task.state !== 'running') return ok({ result: task, polls });
    const left = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - clock.now();
    if (left <= 0) return err(stillRunning(task, timeoutMs!));
    delay = Math.min(interval, schedule.maxIntervalMs, left);
    if (clock.now() >= schedule.growFrom) interval = Math.round(interval * 1.5);
    if (delivered) delay = Math.max(delay, Math.min(schedule.maxIntervalMs, left));
  }
}

/** Sleeps `ms`, or less if the delivery comes first (then answers it); a stop is an `aborted` failure. */
async function pause(
  clock: Clock,
  ms: number,
  signal: AbortSignal | undefined,
  delivered: Promise<TaskResult> | undefined,
): Promise<Result<TaskResult | undefined, GatewayFailure>> {
  if (signal?.aborted) return err(abortedFailure(false));
  // The sleep is cancelled when the delivery wins, so that no timer is left on the clock.
  const cancel = new AbortController();
  const both = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
  const slept = sleep(clock, ms, both).then(
    () => ok(undefined),
    () => err(abortedFailure(false)),
  );
  if (!delivered) return slept;
  const winner = await Promise.race([slept, delivered.then((result) => ok(result))]);
  cancel.abort();
  return winner;
}

function stillRunning(task: TaskResult, timeoutMs: number): GatewayFailure {
  const message = `task ${task.taskId} is still ${task.status} after ${formatDuration(timeoutMs)}`;
  return { reason: 'timeout', phase: 'body', message, retryable: false, outcomeUnknown: false };
}
