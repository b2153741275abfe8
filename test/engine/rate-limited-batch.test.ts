import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { imagePerPrompt } from '../support/recipes.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

const BATCH = imagePerPrompt('batch');

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('a batch of 60 images against 20 requests per 5 seconds', () => {
  it('succeeds with at most one 429, and every request goes through the one budget', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0, 300));
    gateway = await startLocalGateway({
      rpm: 20,
      windowSeconds: 5,
      clock,
      seed: 2,
      latencyScale: 0.2,
      latencyJitter: 0.2,
      maxConcurrent: 10,
    });
    const prompts = JSON.stringify(Array.from({ length: 60 }, (_, i) => `thumbnail number ${i}`));
    const engine = await engineFor(BATCH, gateway, clock, { sets: [`prompts=${prompts}`] });
    const start = clock.now();
    const result = await runPlanSkippingTime(engine, gateway, clock);
    const stats = gateway.stats();
    expect(result.status).toBe('succeeded');
    expect((result.rows[0]!.steps.image!.outputs as unknown[]).length).toBe(60);
    expect(stats.tasks.submitted).toEqual({ 'vendor-a/vendor-a-v3-t2i': 60 });
    expect(stats.rate_limited).toBeLessThanOrEqual(1);
    expect(stats.tasks.max_running.local).toBeLessThanOrEqual(8);
    // Submissions plus polls, with learned polling: well under three requests per image.
    const requests =
      stats.requests.by_route['POST /api/v1/{provider}/{model_id}']! +
      stats.requests.by_route['GET /api/v1/tasks/{task_id}']!;
    expect(requests / 60).toBeLessThan(2.5);
    // 4 requests a second at most: the run cannot beat requests ÷ rate.
    expect(clock.now() - start).toBeGreaterThanOrEqual((requests / 4) * 1000 - 5000);
    await engine.close();
  });
});
