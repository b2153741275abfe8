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

describe('a batch of more rows than are kept in progress', () => {
  it('runs every row, in order of the file, with at most 64 rows begun and not ended at once, and counts them on the console', async () => {
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
    const journal = (await readFile(join(report.run_dir, 'journal.jsonl'), 'utf8'))
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
    expect(started).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    // Two task slots: the window is its floor, 64 rows, and the batch fills it.
    expect(most).toBe(64);
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
});
