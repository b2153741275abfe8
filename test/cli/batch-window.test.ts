import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';
import { tilePerRow } from '../support/recipes.js';

const ROWS = 90;
const RECIPE = tilePerRow('window');

let gateway: LocalGateway;
const clock = new ManualClock();
let dir: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0, seed: 4 });
  dir = await mkdtemp(join(tmpdir(), 'pipeline-window-'));
});
afterAll(async () => {
  await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

/** The most rows begun and not ended at once in a run's journal, and the order the rows began in. */
async function rowsInJournal(runDir: string): Promise<{ most: number; started: number[] }> {
  const journal = (await readFile(join(runDir, 'journal.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; row?: number });
  let inProgress = 0;
  let most = 0;
  const started: number[] = [];
  for (const event of journal) {
    if (event.type === 'step-started') {
      started.push(event.row!);
      most = Math.max(most, ++inProgress);
    }
    if (event.type === 'step-finished') inProgress--;
  }
  return { most, started };
}

describe('a batch of more rows than are kept in progress', () => {
  it('runs every row, in order of the file, with no more rows begun at once than the task slots can take, and counts them on the console', async () => {
    const recipe = join(dir, 'window.yaml');
    const rows = join(dir, 'rows.csv');
    await writeFile(recipe, RECIPE);
    await writeFile(rows, `prompt\n${Array.from({ length: ROWS }, (_, i) => `tile ${i}`).join('\n')}\n`);
    const result = await pipelineInProcess(['run', recipe, '--batch', rows, '--json', '--no-report'], {
      clock,
      gateway,
      env: {
        PIPELINE_API_KEY: gateway.apiKey,
        PIPELINE_BASE_URL: gateway.baseUrl,
        PIPELINE_HOME: join(dir, 'home'),
      },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.outputs).toHaveLength(ROWS);
    const { most, started } = await rowsInJournal(report.run_dir);
    expect(started).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    // Two task slots: a row starts while fewer than two rows prepare and fewer than two tasks wait
    // for a slot, so two in the slots, two waiting, two preparing and the one just let in.
    expect(most).toBeGreaterThan(2);
    expect(most).toBeLessThanOrEqual(7);
    expect(gateway.stats().tasks.submitted).toEqual({ 'vendor-a/vendor-a-v3-t2i': ROWS });
    // The console names the step once and counts its rows, not a line per row and per task.
    const lines = result.stderr.split('\n');
    expect(lines.filter((line) => line.startsWith('▶ '))).toEqual([`▶ tile (${ROWS} runs)`]);
    expect(lines.filter((line) => line.startsWith('  tile: '))).toEqual(
      [9, 18, 27, 36, 45, 54, 63, 72, 81].map((done) => `  tile: ${done} of ${ROWS} done`),
    );
    expect(lines.filter((line) => line.startsWith('✓ tile'))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/row \d+ tile|submitted/);
    // Not a line per task of any kind (each task was once taken for one a worker recorded before a resume).
    expect(result.stderr).not.toContain('recorded by a worker');
    expect(lines.length).toBeLessThan(20);
    // Without --json, the end lists the first outputs and counts the rest, not a line per row.
    const plain = await pipelineInProcess(['run', recipe, '--batch', rows, '--no-report'], {
      clock,
      gateway,
      env: { PIPELINE_API_KEY: gateway.apiKey, PIPELINE_BASE_URL: gateway.baseUrl, PIPELINE_HOME: join(dir, 'home') },
    });
    expect(plain.exitCode, plain.stderr).toBe(0);
    const listed = plain.stdout.split('\n');
    expect(listed.filter((line) => /^ {2}row-\d+-tile\.png/.test(line))).toHaveLength(20);
    expect(listed).toContainEqual(
      expect.stringMatching(/^ {2}… and 70 more files: npx media-pipeline runs show \S+ lists them$/),
    );
  });

  it('without media tasks, runs up to 64 rows at once: nothing waits for a slot', async () => {
    const recipe = join(dir, 'search.yaml');
    const rows = join(dir, 'topics.csv');
    await writeFile(
      recipe,
      'version: 1\nname: search\ninputs:\n  topic: { type: string }\nsteps:\n  research:\n    uses: web-search\n    with: { query: "${{ inputs.topic }}", max_results: 1 }\n',
    );
    await writeFile(rows, `topic\n${Array.from({ length: ROWS }, (_, i) => `bikes ${i}`).join('\n')}\n`);
    const result = await pipelineInProcess(['run', recipe, '--batch', rows, '--json', '--no-report'], {
      clock,
      gateway,
      env: { PIPELINE_API_KEY: gateway.apiKey, PIPELINE_BASE_URL: gateway.baseUrl, PIPELINE_HOME: join(dir, 'home') },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const { most, started } = await rowsInJournal(JSON.parse(result.stdout).run_dir);
    expect(started).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    // Two task slots: the rows in progress have their floor, 64, and the batch fills it.
    expect(most).toBe(64);
  });
});
