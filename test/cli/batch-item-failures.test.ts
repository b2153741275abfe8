import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { pipelineInProcess } from '../support/cli.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-batch-items-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** src[bad] fails with two lines of stderr; mid and end follow src item by item. */
const RECIPE = `version: 1
name: rows
inputs:
  bad: { type: integer }
steps:
  src:
    for_each: [1, 2, 3]
    run: ["node", "-e", "if (process.argv[1] === process.argv[2]) { console.error('first line\\\\nsecond line'); process.exit(1) }", "\${{ item }}", "\${{ inputs.bad }}"]
  mid: { for_each: "\${{ steps.src.outputs }}", run: ["echo", "mid"] }
  end: { for_each: "\${{ steps.mid.outputs }}", run: ["echo", "end"] }
`;

describe('a batch whose rows fail at the same item', () => {
  it('names each skipped item by the row of the item that failed, and indents a failure’s later lines', async () => {
    await writeFile(join(work, 'rows.yaml'), RECIPE);
    await writeFile(join(work, 'rows.csv'), 'bad\n9\n2\n2\n');
    const run = await pipelineInProcess(['run', 'rows.yaml', '--local', '--batch', 'rows.csv'], {
      env: { PIPELINE_HOME: join(work, 'home'), PATH: process.env.PATH ?? '' },
      cwd: work,
      clock: systemClock,
    });
    expect(run.exitCode, run.stderr).toBe(1);
    // Rows 2 and 3 fail at the same item: two causes, not one that names both rows' items.
    expect(run.stderr).toContain('  – skipped because row 2 src[1] failed: row 2 mid[1], row 2 end[1]\n');
    expect(run.stderr).toContain('  – skipped because row 3 src[1] failed: row 3 mid[1], row 3 end[1]');
    expect(run.stderr).toMatch(
      /^ {2}✗ row 2 src\[1\] failed: the command exited with 1:\n {4}first line\n {4}second line$/m,
    );
  });
});
