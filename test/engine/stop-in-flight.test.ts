import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { runPlan } from '../../src/engine/engine.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { engineFor } from '../support/engine.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';
const RECIPE = `version: 1
name: six-images
settings: { concurrency: 3 }
steps:
  image:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [0, 1, 2, 3, 4, 5]
    with: { prompt: "harbour at dawn \${{ item }}" }
`;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/**
 * Runs `recipe` on a fresh gateway that holds back every submission's answer, and stops it (as
 * Ctrl-C does) once a submission is on the wire, unanswered: the run's result and its events.
 */
async function stoppedOnTheWire(recipe: string) {
  gateway = await startLocalGateway({ latencyScale: 0, seed: 4 });
  gateway.injectFault({ kind: 'delay', delay_ms: 400, route: SUBMIT, times: 6 });
  const engine = await engineFor(recipe, gateway, systemClock);
  const run = runPlan(engine.ctx);
  for (let turn = 0; engine.budget.snapshot().unanswered === 0; turn++) {
    if (turn > 100_000) throw new Error('no submission ever left');
    await nextTurn();
  }
  engine.controller.abort(new Error('stopped by the user'));
  const result = await run;
  const events = engine.events();
  await engine.close();
  return { result, events };
}

describe('a stop while paid submissions are on the wire', () => {
  it('waits for their answers, so every submission that left is journaled with its task id', async () => {
    const { result, events } = await stoppedOnTheWire(RECIPE);
    const sent = events.filter((e) => e.type === 'request-sent').map((e) => e.index);
    const answered = events.filter((e) => e.type === 'task-submitted').map((e) => e.index);
    expect(result.status).toBe('interrupted');
    expect(sent.length).toBeGreaterThan(0);
    // Before the fix the run ended at once and these answers were lost: paid tasks left in doubt.
    expect(answered.sort()).toEqual(sent.sort());
    expect(events.some((e) => e.type === 'submission-unknown')).toBe(false);
    expect(gateway!.stats().tasks.submitted).toEqual({ 'vendor-a/vendor-a-v3-t2i': sent.length });
    // The items whose tasks were never sent are told as skipped by the stop (a resume runs them);
    // those in flight are not.
    const skipped = events.filter((e) => e.type === 'item-skipped');
    expect(skipped.map((e) => e.index).sort()).toEqual([0, 1, 2, 3, 4, 5].filter((i) => !sent.includes(i)));
    expect(skipped.every((e) => e.reason === 'the run was stopped')).toBe(true);
  });

  it('starts no flowing step after the stop: its items are only told skipped, and no ▶ line is printed for it', async () => {
    const recipe = `${RECIPE}  tag:\n    for_each: \${{ steps.image.outputs }}\n    run: ["echo", "tagged"]\n`;
    const { result, events } = await stoppedOnTheWire(recipe);
    expect(result.status).toBe('interrupted');
    expect(events.some((e) => e.type === 'step-started' && e.step === 'tag')).toBe(false);
    const tags = events.filter((e) => e.type === 'item-skipped' && e.step === 'tag');
    expect(tags.length).toBeGreaterThan(0);
  });
});

describe('a stop while a file is being uploaded', () => {
  it('cancels the item that needed it, not fails it, and sends nothing', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 4 });
    const UPLOAD = 'POST /api/v1/media/files';
    gateway.injectFault({ kind: 'delay', delay_ms: 2000, route: UPLOAD, times: 1 });
    const logo = fileURLToPath(new URL('../../recipes/assets/logo.png', import.meta.url));
    const recipe = `version: 1
name: badge
steps:
  badge:
    uses: vendor-b/vendor-b-5.0-lite-edit
    with: { prompt: a badge, image: ["${logo}"] }
`;
    const engine = await engineFor(recipe, gateway, systemClock);
    const run = runPlan(engine.ctx);
    // The delay fault is taken when the upload arrives: from then on its answer is held back.
    for (let turn = 0; (gateway.stats().faults_injected.delay ?? 0) === 0; turn++) {
      if (turn > 1_000_000) throw new Error('the upload never left');
      await nextTurn();
    }
    engine.controller.abort(new Error('stopped by the user'));
    const result = await run;
    const events = engine.events();
    await engine.close();
    expect(result.status).toBe('interrupted');
    expect(result.rows[0]!.steps.badge!.status).toBe('cancelled');
    expect(events.some((e) => e.type === 'step-failed')).toBe(false);
    expect(gateway.stats().tasks.submitted).toEqual({});
  });
});
