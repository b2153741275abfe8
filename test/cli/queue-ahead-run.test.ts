import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/store/journal.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-queue-ahead-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const pipeline = (args: string[]) =>
  execa('node', [cli, ...args], { reject: false, env: { PIPELINE_HOME: home, CI: 'true' }, cwd: home });

const SIX_TILES = `version: 1
name: tiles
settings: { concurrency: 2 }
steps:
  tile:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [one, two, three, four, five, six]
    with: { prompt: "tile \${{ item }}", aspect_ratio: "1:1" }
`;

describe('pipeline run --queue-ahead', () => {
  it('submits that many tasks beyond --concurrency and says so', async () => {
    const recipe = join(home, 'tiles.yaml');
    await writeFile(recipe, SIX_TILES);
    const run = await pipeline(['run', recipe, '--local', '--no-cache', '--queue-ahead', '2']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain("2 tasks at once and 2 more in the gateway's queue");
    const runId = /run (\S+) succeeded/.exec(run.stderr)![1]!;
    let inFlight = 0;
    let most = 0;
    for (const event of readJournal(join(home, 'runs', runId, 'journal.jsonl'))) {
      if (event.type === 'task-submitted') most = Math.max(most, ++inFlight);
      if (event.type === 'task-finished') inFlight--;
    }
    expect(most).toBe(4);
  });

  it('refuses a negative count before anything is sent', async () => {
    const run = await pipeline(['run', join(home, 'tiles.yaml'), '--local', '--queue-ahead', '-1']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--queue-ahead/);
    expect(run.stderr).not.toMatch(/tasks at once/);
  });
});
