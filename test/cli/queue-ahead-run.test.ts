import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { readJournal } from '../../src/store/journal.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';
import { twelveImages } from '../support/recipes.js';

/** A gateway that runs 2 of the team's tasks at once and queues the rest, on the manual clock. */
let gateway: LocalGateway;
const clock = new ManualClock();
let home: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, maxConcurrent: 2, latencyScale: 0.3, latencyJitter: 0, seed: 3 });
  home = await mkdtemp(join(tmpdir(), 'pipeline-queue-ahead-'));
  writeFileSync(join(home, 'twelve.yaml'), twelveImages());
});
afterAll(async () => {
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

/** `pipeline …` in this process, through the bin's entry point, on the manual clock. */
const pipeline = (args: string[]) =>
  pipelineInProcess(args, {
    env: { PIPELINE_HOME: home, PIPELINE_BASE_URL: gateway.baseUrl, PIPELINE_API_KEY: gateway.apiKey, CI: 'true' },
    cwd: home,
    clock,
    gateway,
  });

describe('pipeline run --queue-ahead', () => {
  it('submits that many tasks beyond --concurrency and says so', async () => {
    const run = await pipeline(['run', 'twelve.yaml', '--no-cache', '--concurrency', '2', '--queue-ahead', '2']);
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
    const run = await pipeline(['run', 'twelve.yaml', '--queue-ahead', '-1']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--queue-ahead/);
    expect(run.stderr).not.toMatch(/tasks at once/);
  });
});
