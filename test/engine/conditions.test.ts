import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway | undefined;
/** The engine's and the gateway's time: task and poll waits take no real time. */
const clock = new ManualClock();
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function run(recipe: string) {
  gateway ??= await startLocalGateway({ clock, latencyScale: 0 });
  const engine = await engineFor(recipe, gateway, clock);
  const result = await runPlanSkippingTime(engine, gateway, clock);
  const events = engine.events();
  await engine.close();
  return { result, steps: result.rows[0]!.steps, events };
}

const AFTER_A_FAILURE = `version: 1
name: statuses
steps:
  broken: { run: "exit 1" }
  after-broken: { run: "echo never", needs: broken }
  on-success: { run: "echo s", needs: broken, if: success() }
  on-failure: { run: "echo f", needs: broken, if: failure() }
  on-always: { run: "echo a", needs: broken, if: "\${{ always() }}" }
  on-cancelled: { run: "echo c", needs: after-broken, if: cancelled() }
  plain-condition: { run: "echo p", needs: broken, if: "'a' == 'A'" }
  reads-outcome:
    needs: broken
    if: "always() && steps.broken.outcome == 'failure'"
    run: echo \${{ steps.broken.outcome }}/\${{ steps.broken.conclusion }}
`;

describe('status functions in if, as in GitHub Actions', () => {
  it('after a failure: failure(), always() and cancelled() run; success() and a plain condition do not', async () => {
    const { result, steps, events } = await run(AFTER_A_FAILURE);
    expect(steps.broken!.status).toBe('failed');
    expect(steps['on-failure']).toMatchObject({ status: 'succeeded', outputs: { stdout: 'f' } });
    expect(steps['on-always']).toMatchObject({ status: 'succeeded', outputs: { stdout: 'a' } });
    expect(steps['on-cancelled']).toMatchObject({ status: 'succeeded', outputs: { stdout: 'c' } });
    expect(steps['reads-outcome']).toMatchObject({ status: 'succeeded', outputs: { stdout: 'failure/failure' } });
    expect(steps['on-success']).toMatchObject({ status: 'skipped', reason: 'its condition is false' });
    // An if without a status function means success() && …: it never ran, so it is cancelled.
    expect(steps['plain-condition']).toMatchObject({ status: 'cancelled', reason: 'it needs broken, which failed' });
    expect(steps['after-broken']).toMatchObject({ status: 'cancelled' });
    expect(result.status).toBe('failed');
    const cancelled = events.filter((e) => e.type === 'step-cancelled').map((e) => (e as { step: string }).step);
    expect(cancelled.sort()).toEqual(['after-broken', 'plain-condition']);
  });

  it('when nothing failed: success() and always() run; failure() and cancelled() are skipped', async () => {
    const recipe = AFTER_A_FAILURE.replace('broken: { run: "exit 1" }', 'broken: { run: "echo fine" }');
    const { result, steps } = await run(recipe);
    expect(steps['on-success']!.status).toBe('succeeded');
    expect(steps['on-always']!.status).toBe('succeeded');
    expect(steps['plain-condition']!.status).toBe('succeeded');
    expect(steps['on-failure']).toMatchObject({ status: 'skipped', reason: 'its condition is false' });
    expect(steps['on-cancelled']).toMatchObject({ status: 'skipped', reason: 'its condition is false' });
    expect(steps['reads-outcome']).toMatchObject({ status: 'skipped' });
    expect(result.status).toBe('succeeded');
  });

  it('continue_on_error: outcome failure, conclusion success; failure() is false after it and the run succeeds', async () => {
    const { result, steps } = await run(`version: 1
name: tolerant
steps:
  flaky: { run: "exit 2", continue_on_error: true }
  fallback: { run: "echo fallback", needs: flaky, if: failure() }
  report: { run: "echo \${{ steps.flaky.outcome }} \${{ steps.flaky.conclusion }}" }
`);
    expect(steps.flaky!.status).toBe('failed');
    expect(steps.fallback).toMatchObject({ status: 'skipped' });
    expect(steps.report).toMatchObject({ status: 'succeeded', outputs: { stdout: 'failure success' } });
    expect(result.status).toBe('succeeded');
  });

  it('a run: step without retry: is run once; with retry: it is retried', async () => {
    const { steps, events } = await run(`version: 1
name: commands
steps:
  once: { run: "echo x >> once.txt; exit 1", continue_on_error: true }
  twice: { run: "echo x >> twice.txt; exit 1", continue_on_error: true, retry: { attempts: 1, backoff: 1ms } }
  count: { needs: [once, twice], run: "cat once.txt | wc -l; cat twice.txt | wc -l" }
`);
    expect(steps.once!.failure?.reason).toBe('command-failed');
    expect((steps.count!.outputs as { stdout: string }).stdout.split('\n').map((n) => n.trim())).toEqual(['1', '2']);
    expect(events.filter((e) => e.type === 'step-failed')).toHaveLength(2);
  });
});

describe('recipes/fallback-model.yaml', () => {
  const recipe = readFileSync(new URL('../../recipes/fallback-model.yaml', import.meta.url), 'utf8');

  it('runs the fallback model with if: failure() when the first model fails', async () => {
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT, times: 1 });
    const { result, steps } = await run(recipe);
    expect(steps.primary).toMatchObject({ status: 'failed', failure: { reason: 'invalid-parameters' } });
    expect(steps.fallback!.status).toBe('succeeded');
    const outputs = result.rows[0]!.outputs as { hero: { path: string }; made_by: string };
    expect(outputs.made_by).toBe('fallback');
    expect(outputs.hero.path).toMatch(/fallback\.png$/);
    // As in GitHub Actions, the job that had a failing step still fails.
    expect(result.status).toBe('failed');
  });

  it('skips the fallback when the first model succeeds', async () => {
    const { result, steps } = await run(recipe);
    expect(steps.primary!.status).toBe('succeeded');
    expect(steps.fallback).toMatchObject({ status: 'skipped', reason: 'its condition is false' });
    expect((result.rows[0]!.outputs as { made_by: string }).made_by).toBe('primary');
    expect(result.status).toBe('succeeded');
  });
});

describe('a video model on a machine without ffmpeg', () => {
  it('says on the console that the clip was passed through unchanged', async () => {
    gateway = await startLocalGateway({ clock, latencyScale: 0, useFfmpeg: false });
    const notes: string[] = [];
    const { silentReporter } = await import('../../src/engine/reporter.js');
    const recipe = `version: 1
name: clip
steps:
  clip: { uses: vendor-b/vendor-b-2.0-mini-v2v, with: { prompt: dusk, video_urls: [./assets/ride.mp4] } }
`;
    const engine = await engineFor(recipe, gateway, clock, {
      report: { ...silentReporter, note: (text) => notes.push(text) },
    });
    const result = await runPlanSkippingTime(engine, gateway, clock);
    await engine.close();
    expect(result.status).toBe('succeeded');
    expect(notes).toContain(
      'note: clip: no ffmpeg on this machine, so the clip was passed through unchanged (install ffmpeg, or the optional @ffmpeg-installer/ffmpeg)',
    );
  });
});
