/**
 * `validate` and `plan` of a recipe near the step limit (200,000), as whole processes: the plan's
 * table has a row per step, and a column spread as arguments (Math.max(...widths)) overflowed the
 * stack past about 125,000 rows: `plan` of 190,000 valid steps ended in "Maximum call stack size
 * exceeded", exit 1.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRecipe } from '../../bench/lib/generated-recipe.mjs';
import { pipelineProcess } from '../support/cli.js';

const STEPS = 150_000;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'large-recipe-'));
  await writeFile(join(dir, 'large.yaml'), generateRecipe(STEPS, 'large'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe(`a recipe of ${STEPS.toLocaleString('en')} steps`, () => {
  it('is planned as a table with a row per step', async () => {
    const result = await pipelineProcess(['plan', 'large.yaml', '--no-cache'], {
      cwd: dir,
      env: { PATH: process.env.PATH, PIPELINE_HOME: join(dir, 'home') },
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(`large: ${STEPS} steps in 3 layers, 1 run`);
    expect(lines.filter((line) => /^\d+ +s\d+ /.test(line))).toHaveLength(STEPS);
  }, 120_000);
});
