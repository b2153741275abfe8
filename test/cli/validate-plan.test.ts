import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelineInProcess } from '../support/cli.js';

/** `pipeline …` in this process, through the bin's entry point (nothing here waits: no clock to move). */
const run = (args: string[]) => pipelineInProcess(args, { env: { ...process.env, PIPELINE_HOME: home } });
let home: string;
let dir: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-home-'));
  dir = await mkdtemp(join(tmpdir(), 'recipes-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

describe('pipeline validate', () => {
  it('exits 0 with a one-line summary', async () => {
    const result = await run(['validate', 'recipes/launch-kit.yaml']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('recipes/launch-kit.yaml: valid: 6 steps in 6 layers, 3 inputs, 1 run');
    const batch = await run([
      'validate',
      'recipes/batch-thumbnails.yaml',
      '--batch',
      'recipes/data/thumbnails.csv',
      '--json',
    ]);
    expect(JSON.parse(batch.stdout)).toEqual({
      valid: true,
      name: 'batch-thumbnails',
      steps: 1,
      layers: 1,
      inputs: 3,
      rows: 6,
      local_files: [],
    });
    // The files a run would read (literal paths in media fields, file inputs), relative to the working folder.
    const kit = await run(['validate', 'recipes/launch-kit.yaml', '--json']);
    expect(JSON.parse(kit.stdout).local_files).toEqual(['recipes/assets/logo.png', 'recipes/assets/ride.mp4']);
  });

  it('prints every error with its place and exits 2', async () => {
    const path = join(dir, 'two-errors.yaml');
    await writeFile(
      path,
      'version: 1\nname: two\nsteps:\n  a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: x, n: 0 } }\n  b: { run: "echo ${{ steps.a.outputs.nope }}" }\n',
    );
    const result = await run(['validate', path]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        `${path}:4:62: error: n must be at least 1, got 0 (vendor-a/vendor-a-v3-t2i)`,
        '  |',
        '4 |   a: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: x, n: 0 } }',
        '  |                                                              ~',
        '',
        `${path}:5:19: error: steps.a.outputs has no field 'nope'; it has task_id, resources, images, videos, audio, url, path, metadata`,
        '  |',
        '5 |   b: { run: "echo ${{ steps.a.outputs.nope }}" }',
        '  |                   ~~~~~~~~~~~~~~~~~~~~~~~~~~~',
        '',
        `2 errors in ${path}`,
      ].join('\n'),
    );
    const json = await run(['validate', path, '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      valid: false,
      diagnostics: [
        {
          severity: 'error',
          message: 'n must be at least 1, got 0 (vendor-a/vendor-a-v3-t2i)',
          file: path,
          line: 4,
          column: 62,
          end_line: 4,
          end_column: 63,
        },
        {
          severity: 'error',
          message:
            "steps.a.outputs has no field 'nope'; it has task_id, resources, images, videos, audio, url, path, metadata",
          file: path,
          line: 5,
          column: 19,
          end_line: 5,
          end_column: 46,
        },
      ],
    });
    // plan --format json gives the same problems on stdout, for a script that reads it.
    const planned = await run(['plan', path, '--format', 'json']);
    expect(planned.exitCode).toBe(2);
    expect(JSON.parse(planned.stdout)).toEqual(JSON.parse(json.stdout));
  });

  it('checks --set values against the inputs', async () => {
    const result = await run(['validate', 'recipes/launch-kit.yaml', '--set', 'count=12']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe("command line:1:13: error: input 'count' must be at most 9, got 12");
  });

  it('exits 2 for a recipe that cannot be read', async () => {
    const result = await run(['validate', 'no/such/recipe.yaml']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('pipeline: cannot read the recipe no/such/recipe.yaml');
  });
});

describe('pipeline plan', () => {
  it('prints the DAG in layers with totals', async () => {
    const result = await run(['plan', 'recipes/ci-assets.yaml', '--rpm', '10', '--concurrency', '2']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(
      [
        'ci-assets: 3 steps in 3 layers, 1 run',
        '',
        'LAYER  STEP         ACTION                           RUNS  COST     NEEDS',
        '1      backgrounds  vendor-a/vendor-a-v3-t2i         3     $0.1800',
        '2      icon         vendor-b/vendor-b-5.0-lite-edit  1     $0.0400  backgrounds[0]',
        '3      manifest     run                              1              backgrounds, icon',
        '',
        'items      icon ← backgrounds[0]',
        '',
        'tasks      3 × vendor-a/vendor-a-v3-t2i, 1 × vendor-b/vendor-b-5.0-lite-edit',
        'requests   at least 9: 4 submissions, 4 polls, 1 upload, 0 tool calls, 0 text calls',
        'cost       $0.2200',
        'wall time  at least 54.0s at 10 requests a minute and 2 tasks at once',
      ].join('\n'),
    );
  });

  it('counts an upload for each local file of a list input, also where a for_each hands them out one by one', async () => {
    const recipe = join(home, 'pictures.yaml');
    const logo = join(process.cwd(), 'recipes', 'assets', 'logo.png');
    const icon = join(home, 'icon.png');
    await copyFile(logo, icon);
    await writeFile(
      recipe,
      [
        'version: 1',
        'name: pictures',
        'inputs:',
        `  pictures: { type: array, default: ["${logo}", "${icon}"] }`,
        'steps:',
        '  each:',
        '    uses: vendor-b/vendor-b-5.0-lite-edit',
        '    for_each: ${{ inputs.pictures }}',
        '    with: { prompt: in blue, image: ["${{ item }}"], size: 1024x1024 }',
      ].join('\n'),
    );
    const result = await run(['plan', recipe, '--format', 'json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).totals.requests).toMatchObject({ submissions: 2, uploads: 2 });
  });

  it('prints stable JSON', async () => {
    const result = await run([
      'plan',
      'recipes/batch-thumbnails.yaml',
      '--batch',
      'recipes/data/thumbnails.csv',
      '--format',
      'json',
      '--rpm',
      '30',
    ]);
    const estimate = JSON.parse(result.stdout);
    expect(Object.keys(estimate)).toEqual(['name', 'rows', 'layers', 'steps', 'totals']);
    expect(estimate.steps).toEqual([
      {
        id: 'thumbnail',
        action: 'model',
        model: 'vendor-a/vendor-a-v3-t2i',
        layer: 0,
        depends_on: [],
        items_from: null,
        chosen_items: [],
        runs: 6,
        runs_per_row: [1, 1, 1, 1, 1, 1],
        cached: 0,
        cost: { usd: 0.18, per_run_usd: 0.03, dynamic: false, cached_runs: 0 },
      },
    ]);
    expect(estimate.totals).toEqual({
      cached: 0,
      tasks: { 'vendor-a/vendor-a-v3-t2i': 6 },
      requests: { submissions: 6, polls: 6, uploads: 0, tool_calls: 0, text_calls: 0, total: 12, dynamic_steps: [] },
      least_wall_ms: 24_000,
      cost: { usd: 0.18, lower_bound: false, dynamic_steps: [], unpriced_models: [] },
      assumptions: { rpm: 30, rpm_source: 'flag', concurrency: 4, expected_ms: { 'text-to-image': 5000 } },
    });
  });

  it('prints a Mermaid flowchart', async () => {
    const result = await run(['plan', 'recipes/launch-kit.yaml', '--format', 'mermaid']);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      'flowchart TD',
      '  s1["research<br/>web-search"]',
      '  s2["read<br/>web-fetch"]',
    ]);
    expect(result.stdout).toContain('  s3 --> s4');
    expect(result.stdout).toContain('  s4["hero<br/>vendor-a/vendor-a-v3-t2i ×3"]');
  });

  it('shows each item-by-item step as badge[i] ← bg[i], what else it waits for whole, and why a step waits for all of another', async () => {
    const path = join(dir, 'chain.yaml');
    await writeFile(
      path,
      [
        'version: 1',
        'name: chain',
        'steps:',
        '  qa: { run: "echo ok" }',
        '  bg: { uses: vendor-a/vendor-a-v3-t2i, for_each: [red, blue], with: { prompt: "${{ item }}" } }',
        '  badge: { run: "echo ${{ item.url }}", for_each: "${{ steps.bg.outputs }}" }',
        '  stamp: { run: "echo ${{ item.url }}", for_each: "${{ steps.bg.outputs }}", needs: [qa] }',
        '  again: { run: "echo ${{ item }}", for_each: "${{ steps.stamp.outputs }}", if: "steps.bg.outcome == \'success\'" }',
        '  count: { run: "echo ${{ length(steps.bg.outputs) }} ${{ item }}", for_each: "${{ steps.bg.outputs[*].url }}" }',
        '',
      ].join('\n'),
    );
    const result = await run(['plan', path]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^2\s+badge\s+run\s+2\s+bg\[i\]$/m);
    expect(result.stdout).toContain(
      'items      badge[i] ← bg[i]; stamp[i] ← bg[i], after all of qa; again[i] ← stamp[i]; count[i] ← bg[i], after all of bg (its run reads steps.bg.outputs as a whole)',
    );
  });

  it('leaves the runs of every step whose if is decided at run time out of the fewest tasks and requests, and names them', async () => {
    const path = join(dir, 'fallbacks.yaml');
    await writeFile(
      path,
      [
        'version: 1',
        'name: fallbacks',
        'steps:',
        '  t2i: { uses: vendor-a/vendor-a-v3-t2i, continue_on_error: true, with: { prompt: kite } }',
        '  fallback: { uses: vendor-a/vendor-a-v3-t2i, if: "${{ steps.t2i.outcome == \'failure\' }}", with: { prompt: plain kite } }',
        '  note: { uses: web-search, if: "${{ steps.t2i.outcome == \'failure\' }}", with: { query: kites } }',
        '',
      ].join('\n'),
    );
    const result = await run(['plan', path]);
    expect(result.exitCode, result.stderr).toBe(0);
    // Only a model step makes tasks; both make requests.
    expect(result.stdout).toMatch(
      /^tasks {6}1 × vendor-a\/vendor-a-v3-t2i, besides the runs of fallback where its if holds$/m,
    );
    expect(result.stdout).toMatch(
      /^requests {3}at least \d+: .*, besides the runs of fallback, note where their if holds$/m,
    );
  });

  it('refuses an unknown format with exit 2', async () => {
    expect((await run(['plan', 'recipes/launch-kit.yaml', '--format', 'dot'])).exitCode).toBe(2);
  });
});
