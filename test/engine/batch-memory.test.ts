import { afterEach, describe, expect, it } from 'vitest';
import { rowsInProgress } from '../../src/engine/engine.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import type { InputRows } from '../../src/plan.js';
import { RowTable } from '../../src/recipe/row-table.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { runPlanSkippingTime } from '../support/run-engine.js';
import { tilePerRow } from '../support/recipes.js';

// A row's downloads are read by its own later steps only (the edits of test/cli and recipes/ read
// them within a row): they must leave the run's map as the row ends.
const RECIPE = tilePerRow('batch');
const ROWS = 150;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('a batch of many more rows than are in progress at once', () => {
  it('makes each row as it starts and keeps no finished row: its downloads leave the run as it ends, and its results are not held', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 3 });
    const engine = await engineFor(RECIPE, gateway, clock, { sets: ['prompt=tile'] });
    const { ctx } = engine;
    const table = new RowTable({}, {});
    for (let i = 0; i < ROWS; i++) table.push({ prompt: `tile ${i}` });
    // Each row is made from the table once, as the row starts, never further ahead than the rows in progress.
    let made = 0;
    let furthestAhead = 0;
    const rows: InputRows = {
      get length() {
        return table.length;
      },
      at(index) {
        made++;
        furthestAhead = Math.max(furthestAhead, index - tiles);
        return table.at(index);
      },
      [Symbol.iterator]: () => table[Symbol.iterator](),
      entries: () => table.entries(),
    };
    ctx.plan = { ...ctx.plan, rows };
    ctx.forgetRows = true;
    const emit = ctx.emit;
    let mostDownloads = 0;
    let tiles = 0;
    ctx.emit = (event) => {
      mostDownloads = Math.max(mostDownloads, ctx.downloads.size);
      if (event.type === 'output-written') tiles++;
      emit(event);
    };
    const result = await runPlanSkippingTime(engine, gateway, clock);
    expect(result.status).toBe('succeeded');
    expect(tiles).toBe(ROWS);
    // Each row in progress holds its own tile's file at most; a finished row none.
    expect(mostDownloads).toBeGreaterThan(0);
    expect(mostDownloads).toBeLessThanOrEqual(rowsInProgress(ctx));
    expect(ctx.downloads.size).toBe(0);
    expect(result.rows).toEqual([]);
    expect(made).toBe(ROWS);
    expect(furthestAhead).toBeGreaterThan(0);
    expect(furthestAhead).toBeLessThanOrEqual(rowsInProgress(ctx));
    // Rows without `outputs:` share one empty object.
    expect(result.outputs).toHaveLength(ROWS);
    expect(new Set(result.outputs).size).toBe(1);
    await engine.close();
  });
});
