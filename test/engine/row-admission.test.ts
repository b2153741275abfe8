import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { RowTable } from '../../src/recipe/row-table.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { IMAGE_SLUG } from '../support/recipes.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

// Each row searches, then draws from what it found: a row prepares before it has a task.
const RECIPE = `version: 1
name: admitted
inputs:
  topic: { type: string }
settings: { concurrency: 2 }
steps:
  research:
    uses: web-search
    with: { query: "\${{ inputs.topic }}", max_results: 1 }
  tile:
    uses: ${IMAGE_SLUG}
    with: { prompt: "\${{ inputs.topic }}: \${{ steps.research.outputs.results[0].title }}", aspect_ratio: "1:1" }
`;
const ROWS = 12;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('the rows of a batch', () => {
  it('start as the task slots can take their work, not all at once: the last row starts after the first task is sent', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0.01, seed: 4 });
    const engine = await engineFor(RECIPE, gateway, clock, { sets: ['topic=bikes'] });
    const { ctx } = engine;
    const table = new RowTable({}, {});
    for (let i = 0; i < ROWS; i++) table.push({ topic: `cargo bikes ${i}` });
    ctx.plan = { ...ctx.plan, rows: table };
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.status).toBe('succeeded');
    const events = engine.events();
    expect(events.filter((e) => e.type === 'task-submitted')).toHaveLength(ROWS);

    const firstSubmission = events.findIndex((e) => e.type === 'task-submitted' && e.row === 0);
    const lastRowStarts = events.findIndex((e) => e.type === 'step-started' && e.row === ROWS - 1);
    expect(firstSubmission).toBeGreaterThan(-1);
    expect(lastRowStarts).toBeGreaterThan(firstSubmission);
    // Started all at once, every row's search would start before any task: here at most the two
    // slots' worth of rows prepare, plus the rows whose tasks wait for a slot.
    let preparing = 0;
    let most = 0;
    for (const e of events) {
      if (e.type === 'step-started' && e.step === 'research') most = Math.max(most, ++preparing);
      if (e.type === 'task-submitted') preparing--;
    }
    expect(most).toBeLessThanOrEqual(2 * 2 + 1);
  });
});
