import { afterEach, describe, expect, it } from 'vitest';
import { DurationModel } from '../../src/engine/durations.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { IMAGE_SLUG, imagePerPrompt } from '../support/recipes.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

const BATCH = imagePerPrompt('spare-reads');

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/**
 * 32 images whose times vary by ±30 % around 3.5 s, on a gateway with room to spare (120 requests
 * per 6 s), their model's times learned by an earlier run: each task's mean time from submission to
 * the moment the run saw it end, past its processing time, and the reads per task.
 */
async function batchOnJitteredGateway(spareReads: boolean) {
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 12, 0, 0, 300));
  gateway = await startLocalGateway({
    rpm: 120,
    windowSeconds: 6,
    clock,
    seed: 5,
    latencyJitter: 0.3,
    maxConcurrent: 8,
  });
  const prompts = JSON.stringify(Array.from({ length: 32 }, (_, i) => `tile number ${i}`));
  const engine = await engineFor(BATCH, gateway, clock, { sets: [`prompts=${prompts}`] });
  engine.ctx.durations = new DurationModel({ [IMAGE_SLUG]: { mean: 3500, variance: 600 ** 2, samples: 20 } });
  if (!spareReads) delete engine.ctx.hasSpareRoom;
  const result = await runPlanSkippingTime(engine, gateway, clock);
  expect(result.status).toBe('succeeded');
  const submittedAt = new Map<number, number>();
  let lag = 0;
  let polls = 0;
  /** The waits of the tasks still running at their first read, seen by a later one. */
  const late: number[] = [];
  for (const event of await engine.events()) {
    if (event.type === 'task-submitted') submittedAt.set(event.index!, event.t);
    if (event.type !== 'task-finished') continue;
    const waited = event.t - submittedAt.get(event.index!)! - event.duration_ms!;
    lag += waited;
    polls += event.polls!;
    if (event.polls! > 1) late.push(waited);
  }
  await engine.close();
  await gateway.close();
  gateway = undefined;
  return {
    lagMs: lag / 32,
    pollsPerTask: polls / 32,
    lateLagMs: late.reduce((a, b) => a + b, 0) / Math.max(1, late.length),
    late: late.length,
  };
}

describe('spare reads', () => {
  it('where task times vary and the window has room to spare, tasks are seen ending sooner, for a few reads more each', async () => {
    const scheduled = await batchOnJitteredGateway(false);
    const withSpares = await batchOnJitteredGateway(true);
    // The schedule alone reads first a deviation past the mean: a task that ends early waits for it.
    expect(scheduled.lagMs).toBeGreaterThan(500);
    expect(withSpares.lagMs).toBeLessThan(scheduled.lagMs * 0.6);
    expect(withSpares.pollsPerTask).toBeGreaterThan(scheduled.pollsPerTask);
    expect(withSpares.pollsPerTask).toBeLessThan(4);
  });

  it('a task still running at its first read is read next at the top of its model’s spread, not a fifth of its time later', async () => {
    // Learned: 3.5 s ± 0.6 s. First read at 4.1 s; the top of the spread 3.5 + √3 × 0.6 s = 4.56 s,
    // and no task takes longer than 4.55 s here. Read 1 s after the first instead, one ending at
    // 4.2 s held its slot 0.9 s for nothing. (A task its gateway ends a little past its time is
    // still missed at the top, and read later: the mean, not the longest.)
    const scheduled = await batchOnJitteredGateway(false);
    expect(scheduled.late).toBeGreaterThan(2);
    // On average: read a second later instead, these waited 660 ms here.
    expect(scheduled.lateLagMs).toBeLessThan(400);
    expect(scheduled.pollsPerTask).toBeLessThan(1.5);
  });
});
