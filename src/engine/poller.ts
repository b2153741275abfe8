import type { GatewayClient } from '../gateway/client.js';
import type { TaskResult } from '../gateway/types.js';
import { sleep, type Clock } from '../scheduler/clock.js';
import { fromGateway, failWith } from './failure.js';

export interface PollOptions {
  /** Expected milliseconds from submission to the end. */
  expectedMs: number;
  /** The expectation was learned from finished tasks of this model, not a first guess. */
  learned: boolean;
  submittedAt: number;
  /** The longest wait between two polls (`settings.poll`). */
  maxIntervalMs: number;
  /** With webhooks: resolves when the result arrives; polls become a slow safety net. */
  delivered?: Promise<TaskResult>;
  signal: AbortSignal;
}

/**
 * Waits for a task to end, spending as few reads of the budget as it can. Once the model's time is
 * learned, the first poll comes a little after the expected end, when a typical task is done, and
 * later ones back off from a fifth of that time, growing by half, up to `maxIntervalMs`. Before
 * anything is learned the first guess may be far off either way, so the first poll comes at a
 * quarter of it and the back-off starts there. With a webhook the first poll waits three times as
 * long: it is only there in case the delivery is lost.
 */
export async function waitForTask(client: GatewayClient, clock: Clock, taskId: string, options: PollOptions): Promise<{ result: TaskResult; polls: number }> {
  const { expectedMs, maxIntervalMs, signal } = options;
  let polls = 0;
  const firstAt = options.delivered ? 3 : options.learned ? 1.1 : 0.25;
  let delay = Math.max(200, options.submittedAt + Math.round(expectedMs * firstAt) - clock.now());
  let interval = Math.max(1000, Math.round(expectedMs / (options.learned ? 5 : 4)));
  let delivered: TaskResult | undefined;
  options.delivered?.then((result) => (delivered = result)).catch(() => {});
  for (;;) {
    if (options.delivered) {
      const arrived = await Promise.race([sleep(clock, delay, signal).then(() => undefined), options.delivered]);
      if (arrived) return { result: arrived, polls };
    } else await sleep(clock, delay, signal);
    if (delivered) return { result: delivered, polls };
    const read = await client.task(taskId, signal);
    polls++;
    if (!read.ok) failWith({ ...fromGateway(read.error, `reading task ${taskId}`), taskId });
    const result = read.ok ? read.value : undefined;
    if (result && result.state !== 'running') return { result, polls };
    delay = Math.min(interval, maxIntervalMs);
    interval = Math.round(interval * 1.5);
    if (options.delivered) delay = Math.max(delay, maxIntervalMs);
  }
}
