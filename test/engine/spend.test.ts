import { afterEach, describe, expect, it } from 'vitest';
import { SpendMeter } from '../../src/engine/spend.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { readBundledSchema } from '../../src/model-schemas/bundled.js';
import { pricingOf } from '../../src/model-schemas/prices.js';
import type { JournalEvent } from '../../src/store/journal.js';
import { spendFigures, summarise } from '../../src/store/summary.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

const T2I = 'vendor-a/vendor-a-v3-t2i';
const SUBMIT = 'POST /api/v1/{provider}/{model_id}';
const RECIPE = `version: 1
name: eight-images
settings: { concurrency: 3 }
steps:
  image:
    uses: ${T2I}
    for_each: [0, 1, 2, 3, 4, 5, 6, 7]
    with: { prompt: "harbour at dawn \${{ item }}" }
`;

/** The engine's events as a run's journal would hold them, behind the run-started line the command line writes. */
const asRun = (events: JournalEvent[]) =>
  summarise([
    {
      type: 'run-started',
      t: 0,
      run_id: 'test-run',
      recipe: 'test.yaml',
      name: 'eight-images',
      rows: [{}],
      sets: [],
      batch: null,
    },
    ...events,
  ]);

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('the engine and the team balance', () => {
  it('after a 402 sends nothing more, and the tasks already in flight finish', async () => {
    const clock = new ManualClock();
    // $0.10 pays for three pictures. Tasks take seconds, of different lengths: when the first ends,
    // the next submission is answered 402 while the other two are still running.
    gateway = await startLocalGateway({ clock, latencyScale: 1, latencyJitter: 0.5, balanceUsd: 0.1, seed: 5 });
    const engine = await engineFor(RECIPE, gateway, clock, { concurrency: 3 });
    engine.ctx.spend = new SpendMeter(pricingOf(readBundledSchema), {});
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.status).toBe('stopped');
    const stats = gateway.stats();
    expect(stats.tasks.submitted).toEqual({ [T2I]: 3 });
    const events = engine.events();
    expect(events.filter((e) => e.type === 'item-finished')).toHaveLength(3);
    const refused = events.filter((e) => e.type === 'submission-refused');
    // Submissions that left together before the first 402 came back may meet one too; no more.
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(stats.requests.by_status['402']).toBe(refused.length);
    expect(stats.requests.by_route[SUBMIT]).toBe(3 + refused.length);
    expect(events.filter((e) => e.type === 'request-sent')).toHaveLength(3 + refused.length);
    const refusedAt = events.findIndex((e) => e.type === 'submission-refused');
    // Nothing was sent after the 402; a task still running then finished after it.
    expect(events.slice(refusedAt).filter((e) => e.type === 'request-sent')).toHaveLength(0);
    expect(events.slice(refusedAt).some((e) => e.type === 'task-finished' && e.status === 'success')).toBe(true);
    const failure = events.find((e) => e.type === 'step-failed');
    expect(failure).toMatchObject({ reason: 'insufficient-balance' });
    const summary = asRun(events);
    expect(summary.cost.committed_usd).toBe(0.09);
    expect(summary.cost.by_step).toEqual({ image: 0.09 });
    await engine.close();
  });

  it('holds a cap exactly: committed never passes it, whatever runs at once', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 6 });
    const engine = await engineFor(RECIPE, gateway, clock, { concurrency: 3 });
    engine.ctx.spend = new SpendMeter(pricingOf(readBundledSchema), { capUsd: 0.15 });
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.status).toBe('stopped');
    expect(gateway.stats().tasks.submitted).toEqual({ [T2I]: 5 });
    const events = engine.events();
    expect(events.filter((e) => e.type === 'request-sent')).toHaveLength(5);
    expect(events.find((e) => e.type === 'step-failed')).toMatchObject({ reason: 'spend-cap' });
    expect(asRun(events).cost.committed_usd).toBe(0.15);
    await engine.close();
  });
});

describe('what a run spent on tasks that failed', () => {
  it('is counted apart within what it committed: the gateway refunds it, the cap does not', async () => {
    const clock = new ManualClock();
    // Every task ends failed, and is refunded by the built-in gateway.
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 6, failRate: 1 });
    const engine = await engineFor(
      RECIPE.replace('    for_each: [0, 1, 2, 3, 4, 5, 6, 7]', '    retry: { attempts: 0 }\n    for_each: [0, 1]'),
      gateway,
      clock,
    );
    engine.ctx.spend = new SpendMeter(pricingOf(readBundledSchema), {});
    await runPlanSkippingTime(engine, gateway, clock);
    const cost = asRun(engine.events()).cost;
    expect(cost.committed_usd).toBe(0.06);
    expect(cost.failed_usd).toBe(0.06);
    expect(spendFigures(cost)).toBe(
      '$0.0600 ($0.0600 of it on tasks that failed, refunded if the gateway refunds them)',
    );
    await engine.close();
  });
});
