// The check a run makes before it starts (GET apikey/validate, then team/balance: is the gateway
// there, is the key good) is two of the key's requests like any other: they wait their turn in the
// key's budget, and their answers' rate-limit headers teach it. Sent past the budget, they took a
// place in the window that the budget (or, with --redis, another process on the key) had counted
// on, and a request met a 429.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const SLUG = 'vendor-a/vendor-a-v3-t2i';
let work: string;
let recipe: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-preflight-'));
  recipe = join(work, 'one.yaml');
  const step = `  image:\n    uses: ${SLUG}\n    with: { prompt: "a lighthouse", aspect_ratio: "1:1" }\n`;
  await writeFile(recipe, `version: 1\nname: one\nsteps:\n${step}`);
});
afterAll(() => rm(work, { recursive: true, force: true }));

/** One image, run on `gateway` with one request per window of `windowSeconds`, on a manual clock. */
async function runOneImage(windowSeconds: number, home: string) {
  const clock = new ManualClock();
  const gateway: LocalGateway = await startLocalGateway({
    clock,
    rpm: 1,
    windowSeconds,
    latencyScale: 0.01,
    latencyJitter: 0,
    seed: 4,
  });
  try {
    const run = await pipelineInProcess(['run', recipe, '--no-cache'], {
      clock,
      gateway,
      env: {
        PATH: process.env.PATH,
        PIPELINE_HOME: join(work, home),
        PIPELINE_BASE_URL: gateway.baseUrl,
        PIPELINE_API_KEY: gateway.apiKey,
        CI: 'true',
      },
    });
    return { run, stats: gateway.stats() };
  } finally {
    await gateway.close();
  }
}

it('with one request a window, the check and the run take a window each: no 429', async () => {
  const { run, stats } = await runOneImage(1, 'home');
  expect(run.exitCode, run.stderr).toBe(0);
  // As a word: the gateway's port in the notice may hold the digits 429.
  expect(run.stderr).not.toMatch(/\b429\b/);
  expect(stats.tasks.submitted).toEqual({ [SLUG]: 1 });
  expect(stats.rate_limited).toBe(0);
});

it('says once on stderr, before the run starts, that the check waits for the rate window', async () => {
  // One request a 10 s window: the check's second request waits a whole window.
  const { run, stats } = await runOneImage(10, 'home-wait');
  expect(run.exitCode, run.stderr).toBe(0);
  const notice = /^⏳ waiting for the API key's rate window before checking the gateway at 127\.0\.0\.1:\d+$/gm;
  expect(run.stderr.match(notice), run.stderr).toHaveLength(1);
  expect(run.stderr.indexOf('⏳ waiting')).toBeLessThan(run.stderr.indexOf('run '));
  expect(stats.rate_limited).toBe(0);
});
