// The probe a run sends before it starts (GET /account: is the gateway there, is the key good) is
// one of the key's requests like any other: it waits its turn in the key's budget, and its answer's
// rate-limit headers teach the budget. Sent past the budget, it took a place in the window that the
// budget (or, with --redis, another process on the key) had counted on, and a request met a 429.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-preflight-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

it('with one request a window, the probe spends the first window and the run waits for the next: no 429', async () => {
  const clock = new ManualClock();
  const gateway = await startLocalGateway({
    clock,
    rpm: 1,
    windowSeconds: 1,
    latencyScale: 0.01,
    latencyJitter: 0,
    seed: 4,
  });
  try {
    const recipe = join(work, 'one.yaml');
    const step =
      '  image:\n    uses: vendor-a/vendor-a-v3-t2i\n    with: { prompt: "a lighthouse", aspect_ratio: "1:1" }\n';
    await writeFile(recipe, `version: 1\nname: one\nsteps:\n${step}`);
    const run = await pipelineInProcess(['run', recipe, '--no-cache'], {
      clock,
      gateway,
      env: {
        PATH: process.env.PATH,
        PIPELINE_HOME: join(work, 'home'),
        PIPELINE_BASE_URL: gateway.baseUrl,
        PIPELINE_API_KEY: gateway.apiKey,
        CI: 'true',
      },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/429/);
    const stats = gateway.stats();
    expect(stats.tasks.submitted).toEqual({ 'vendor-a/vendor-a-v3-t2i': 1 });
    expect(stats.rate_limited).toBe(0);
  } finally {
    await gateway.close();
  }
});
