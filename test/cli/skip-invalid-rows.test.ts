import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { FIVE_ROWS, POSTER_RECIPE, RUN_TIME_RATIO_RECIPE, rowMessages } from '../support/bad-rows.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway;
/** The gateway's and the commands' time: polls and task latencies take no real time. */
const clock = new ManualClock();
let dir: string;
let recipe: string;
let rows: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0 });
  dir = await mkdtemp(join(tmpdir(), 'pipeline-rows-'));
  recipe = join(dir, 'posters.yaml');
  rows = join(dir, 'rows.csv');
  await writeFile(recipe, POSTER_RECIPE);
  await writeFile(rows, FIVE_ROWS);
});
afterAll(async () => {
  await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const pipeline = (args: string[]) =>
  pipelineInProcess(args, {
    clock,
    gateway,
    env: {
      PIPELINE_API_KEY: gateway.apiKey,
      PIPELINE_BASE_URL: gateway.baseUrl,
      PIPELINE_HOME: join(dir, 'home'),
      PATH: process.env.PATH ?? '',
    },
  });

/** Runs the command and counts the POSTs the gateway received meanwhile, and the model submissions among them. */
async function counted(args: string[]) {
  const before = gateway.stats().requests.by_route;
  const result = await pipeline(args);
  await gateway.settle();
  const after = gateway.stats().requests.by_route;
  const made = (route: string) => (after[route] ?? 0) - (before[route] ?? 0);
  const posts = Object.keys(after)
    .filter((route) => route.startsWith('POST '))
    .reduce((sum, route) => sum + made(route), 0);
  return { result, posts, submitted: made(SUBMIT) };
}

const errorLines = (stderr: string) => stderr.split('\n').filter((line) => line.includes(': error: '));
const expectedErrors = () => rowMessages(recipe).map((p) => `${rows}:${p.line}:1: error: ${p.message}`);
const expectedWarnings = () => [
  '--skip-invalid-rows: 3 rows left out, 2 kept:',
  ...rowMessages(recipe).map((p) => `  ${rows}:${p.line}:1: warning: ${p.message}`),
];

describe('run --batch with a bad input type, a column-count error and a value the model rejects', () => {
  it('without --skip-invalid-rows: all three reported, exit 2, not one POST', async () => {
    const { result, posts } = await counted(['run', recipe, '--batch', rows]);
    expect(result.exitCode).toBe(2);
    expect(errorLines(result.stderr)).toEqual(expectedErrors());
    expect(posts).toBe(0);
  });

  it('with --skip-invalid-rows: the two good rows run, the three bad ones are listed', async () => {
    const { result, submitted } = await counted(['run', recipe, '--batch', rows, '--skip-invalid-rows', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr.split('\n').slice(0, 4)).toEqual(expectedWarnings());
    const printed = JSON.parse(result.stdout);
    expect(printed.outputs).toHaveLength(2);
    expect(submitted).toBe(2);
    // The rows left out stay with the run: in --json, in run.json and in runs show.
    const where = rowMessages(recipe).map((p) => `${rows}:${p.line}:1`);
    expect(printed.skipped_rows.map((s: { where: string }) => s.where)).toEqual(where);
    const summary = JSON.parse(await readFile(join(printed.run_dir, 'run.json'), 'utf8'));
    expect(summary.skipped_rows).toEqual(printed.skipped_rows);
    const shown = await pipeline(['runs', 'show', printed.run_id]);
    expect(shown.stdout).toContain(`left out 3 rows (--skip-invalid-rows): ${where.join(', ')}`);
  });

  it('a resume reads the kept rows again from the batch file, and refuses when they are not the same rows', async () => {
    // The first submission is refused: row 1 fails, row 2 is made, the run ends 1.
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT, times: 1 });
    const run = await pipeline(['run', recipe, '--batch', rows, '--skip-invalid-rows', '--no-cache', '--json']);
    expect(run.exitCode, run.stderr).toBe(1);
    const { run_id: runId, run_dir: runDir } = JSON.parse(run.stdout);
    const journal = join(runDir, 'journal.jsonl');
    const started = JSON.parse((await readFile(journal, 'utf8')).split('\n')[0]!);
    // The journal does not copy the batch's rows: it counts them and keeps their digest.
    expect(started).not.toHaveProperty('rows');
    expect(started).toMatchObject({ row_count: 2, rows_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    // The kept batch file, changed: its rows read again are not the run's, and nothing is sent.
    const kept = join(runDir, 'batch.csv');
    const keptText = await readFile(kept, 'utf8');
    await writeFile(kept, keptText.replace('Five,1,1:1', 'Six,1,1:1'));
    const refused = await counted(['resume', runId]);
    expect(refused.result.exitCode).toBe(2);
    expect(refused.result.stderr).toContain(
      `run ${runId} cannot be resumed: its batch file, read again, gives 2 rows that are not the 2 the run started with`,
    );
    expect(refused.posts).toBe(0);

    await writeFile(kept, keptText);
    const resumed = await counted(['resume', runId, '--no-cache', '--json']);
    expect(resumed.result.exitCode, resumed.result.stderr).toBe(0);
    expect(resumed.submitted).toBe(1);
    expect(JSON.parse(resumed.result.stdout).outputs).toHaveLength(2);
  });

  it('a value known only at run time fails its item before the POST, costing nothing', async () => {
    const picked = join(dir, 'picked.yaml');
    await writeFile(picked, RUN_TIME_RATIO_RECIPE);
    const titles = join(dir, 'titles.csv');
    await writeFile(titles, 'title\nA\n');
    const { result, submitted } = await counted(['run', picked, '--batch', titles, '--skip-invalid-rows']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).not.toContain('--skip-invalid-rows:');
    expect(result.stderr).toContain('aspect_ratio must be one of 16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3, 21:9; got "7:3"');
    expect(submitted).toBe(0);
  });
});

describe('validate and plan with --skip-invalid-rows', () => {
  it('validate: exit 2 and every bad row without the flag; exit 0 and the rows as warnings with it', async () => {
    const strict = await pipeline(['validate', recipe, '--batch', rows]);
    expect(strict.exitCode).toBe(2);
    expect(errorLines(strict.stderr)).toEqual(expectedErrors());
    // Counted where they are: in the batch file, not the recipe.
    expect(strict.stderr.trim().split('\n').at(-1)).toBe(`3 errors in ${rows}`);
    const lenient = await pipeline(['validate', recipe, '--batch', rows, '--skip-invalid-rows']);
    expect(lenient.exitCode).toBe(0);
    expect(lenient.stdout).toBe(`${recipe}: valid: 1 step in 1 layer, 3 inputs, 2 runs (3 rows left out)`);
    expect(lenient.stderr.split('\n')).toEqual(expectedWarnings());
  });

  it('validate --json carries the rows left out as a list', async () => {
    const result = await pipeline(['validate', recipe, '--batch', rows, '--skip-invalid-rows', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      valid: true,
      rows: 2,
      skipped_rows: rowMessages(recipe).map((p) => ({ where: `${rows}:${p.line}:1`, message: p.message })),
    });
  });

  it('plan: the kept rows planned and priced, the rows left out shown; --format json lists them', async () => {
    expect((await pipeline(['plan', recipe, '--batch', rows])).exitCode).toBe(2);
    // --no-cache: the runs above filled the step cache, and a cached run costs nothing.
    const text = await pipeline(['plan', recipe, '--batch', rows, '--skip-invalid-rows', '--no-cache']);
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe('posters: 1 step in 1 layer, 2 runs');
    expect(lines).toContain('cost       $0.0600');
    expect(lines.at(-1)).toBe(
      `left out   3 rows (--skip-invalid-rows): ${rowMessages(recipe)
        .map((p) => `${rows}:${p.line}:1`)
        .join(', ')}`,
    );
    expect(text.stderr.split('\n')).toEqual(expectedWarnings());
    const json = JSON.parse(
      (await pipeline(['plan', recipe, '--batch', rows, '--skip-invalid-rows', '--format', 'json'])).stdout,
    );
    expect(json.rows).toBe(2);
    expect(json.steps[0].runs).toBe(2);
    expect(json.skipped_rows.map((s: { where: string }) => s.where)).toEqual(
      rowMessages(recipe).map((p) => `${rows}:${p.line}:1`),
    );
  });

  it("a row whose list of files, handed out by a for_each, names a missing one is that row's fault: left out with the flag", async () => {
    const pictures = join(dir, 'pictures.yaml');
    await writeFile(
      pictures,
      [
        'version: 1',
        'name: pictures',
        'inputs:',
        '  pics: { type: array }',
        'steps:',
        '  edit:',
        '    uses: vendor-b/vendor-b-5.0-lite-edit',
        '    for_each: ${{ inputs.pics }}',
        '    with: { prompt: blue, image: ["${{ item }}"], size: 1024x1024 }',
        '',
      ].join('\n'),
    );
    const logo = join(process.cwd(), 'recipes', 'assets', 'logo.png');
    const lists = join(dir, 'pictures.jsonl');
    await writeFile(lists, `${JSON.stringify({ pics: [logo] })}\n${JSON.stringify({ pics: [logo, './gone.png'] })}\n`);
    const refused = await pipeline(['validate', pictures, '--batch', lists]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(
      `${lists}:2:1: error: input 'pics' gives steps.edit.with.image[0] (${pictures}:9:35): file ./gone.png does not exist`,
    );
    const kept = await pipeline(['validate', pictures, '--batch', lists, '--skip-invalid-rows']);
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(kept.stdout).toContain('(1 row left out)');
  });

  it.each(['validate', 'plan', 'run'])('%s --skip-invalid-rows without --batch is a usage error', async (command) => {
    const result = await pipeline([command, recipe, '--set', 'title=A', '--skip-invalid-rows']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('pipeline: --skip-invalid-rows goes with --batch');
  });
});
