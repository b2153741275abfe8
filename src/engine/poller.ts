import type { GatewayClient } from '../gateway/client.js';
import type { TaskResult } from '../gateway/types.js';
import { sleep, type Clock } from '../clock.js';
import { fromGateway, failWith } from './failure.js';

export interface PollOptions {
  /** Expected milliseconds from submission to the end. */
  expectedMs: number;
  /** When a typical task of this model is done, learned from finished ones; undefined before that. */
  firstPollMs: number | undefined;
  submittedAt: number;
  /** The longest wait between two polls (`settings.poll`). */
  maxIntervalMs: number;
  /** With webhooks: resolves when the result arrives; polls become a slow safety net. */
  delivered?: Promise<TaskResult>;
  signal: AbortSignal;
}

/**
 * Waits for a task to end, spending as few reads of the budget as it can. Once the model's time is
 * learned, the first poll comes when a typical task is done (a standard deviation past the mean),
 * later ones back off from a fifth of that time, growing by half, up to `maxIntervalMs`. Before
 * anything is learned the first guess may be far off either way, so polls come every quarter of
 * it until it has passed, and back off from there. With a webhook the first poll waits three times as
 * long: it is only there in case the delivery is lost.
 */
export async function waitForTask(client: GatewayClient, clock: Clock, taskId: string, options: PollOptions): Promise<{ result: TaskResult; polls: number }> {
  const { expectedMs, maxIntervalMs, signal } = options;
  let polls = 0;
  const learned = options.firstPollMs !== undefined;
  const firstAt = options.delivered ? expectedMs * 3 : (options.firstPollMs ?? expectedMs / 4);
  let delay = Math.max(200, options.submittedAt + Math.round(firstAt) - clock.now());
  let interval = Math.max(1000, Math.round(expectedMs / (learned ? 5 : 4)));
  for (;;) {
    const slept = sleep(clock, delay, signal).then(() => undefined);
    const arrived = await (options.delivered ? Promise.race([slept, options.delivered]) : slept);
    if (arrived) return { result: arrived, polls };
    const read = await client.task(taskId, signal);
    polls++;
    if (!read.ok) return failWith({ ...fromGateway(read.error, `reading task ${taskId}`), taskId });
    if (read.value.state !== 'running') return { result: read.value, polls };
    delay = Math.min(interval, maxIntervalMs);
    // A first guess is checked at even steps up to the guess; back-off starts after it.
    if (learned || clock.now() - options.submittedAt >= expectedMs) interval = Math.round(interval * 1.5);
    if (options.delivered) delay = Math.max(delay, maxIntervalMs);
  }
}
