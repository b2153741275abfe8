/**
 * `pipeline run --workers` and `pipeline worker`, as processes on one real Redis against the local
 * gateway: the work spread, a worker that says it lost Redis, and `runs_on: worker`.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { startLocalGateway } from '../../src/local-gateway/index.js';
import { redisTestsRun, startRedis } from '../support/redis-server.js';
import {
  batchRecipe,
  cli,
  dir,
  envFor,
  everythingIn,
  gatewayOptions,
  PASSWORD,
  redis,
  SLUG,
  startWorker,
  stopAll,
  useFolderAndRedis,
  waitFor,
  type WorkerProcess,
} from './harness.js';

useFolderAndRedis();

describe.skipIf(!redisTestsRun)('three workers and a coordinator on one Redis', () => {
  it('run a 60-image batch: every item once, no 429, no secret in Redis', { timeout: 300_000 }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(1));
    const workers: WorkerProcess[] = [];
    try {
      for (const tag of ['a', 'b', 'c']) workers.push(await startWorker(gateway, `all-w${tag}`, 'all'));
      const recipe = join(dir, 'all.yaml');
      await writeFile(recipe, batchRecipe(60, 'all'));
      const run = await execa(
        'node',
        [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'all', '--json'],
        { reject: false, env: envFor(gateway, 'all-coordinator') },
      );
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(JSON.parse(String(run.stdout)).files).toHaveLength(60);
      const stats = gateway.stats();
      expect(stats.tasks.submitted).toEqual({ [SLUG]: 60 });
      expect(stats.rate_limited).toBe(0);
      await stopAll(workers);
      // The work was spread: each worker says how many jobs it ran when it stops.
      const counts = workers.map((worker) => Number(/stopped after (\d+) jobs/.exec(worker.stderr())?.[1]));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(60);
      for (const count of counts) expect(count).toBeGreaterThan(0);
      const stored = await everythingIn(redis.url);
      expect(stored).toContain('all shot 7');
      expect(stored).not.toContain(gateway.apiKey);
      expect(stored).not.toContain(PASSWORD);
      expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
    } finally {
      await stopAll(workers);
      await gateway.close();
    }
  });

  it('journals what a submission the gateway refused on a worker asked, as a local refusal does', {
    timeout: 120_000,
  }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(3));
    const workers = [await startWorker(gateway, 'refused-w', 'refused')];
    try {
      gateway.injectFault({
        kind: 'status',
        status: 400,
        route: 'POST /api/v1/{provider}/{model_id}',
        body_contains: 'refused shot 2',
      });
      const recipe = join(dir, 'refused.yaml');
      await writeFile(recipe, batchRecipe(4, 'refused'));
      const run = await execa(
        'node',
        [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'refused', '--json'],
        {
          reject: false,
          env: envFor(gateway, 'refused-coordinator'),
        },
      );
      expect(run.exitCode, String(run.stderr)).toBe(1);
      const { run_dir: runDir } = JSON.parse(String(run.stdout));
      const journal = (await readFile(join(runDir, 'journal.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      // The report's card of image[2] shows the prompt it was refused for.
      expect(journal).toContainEqual(
        expect.objectContaining({
          type: 'submission-refused',
          index: 2,
          input: expect.objectContaining({ prompt: 'refused shot 2' }),
        }),
      );
    } finally {
      await stopAll(workers);
      await gateway.close();
    }
  });

  it('runs the launch-kit example on a worker: web search, web fetch, LLM, and model items with an uploaded file', {
    timeout: 180_000,
  }, async () => {
    // What is tested is where each item runs, not how long: the model latencies at a twentieth.
    const gateway = await startLocalGateway({ ...gatewayOptions(7), latencyScale: 0.05 });
    const worker = await startWorker(gateway, 'kit-w', 'kit');
    try {
      const recipe = fileURLToPath(new URL('../../recipes/launch-kit.yaml', import.meta.url));
      const run = await execa(
        'node',
        [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'kit', '--json'],
        {
          reject: false,
          env: envFor(gateway, 'kit-coordinator'),
        },
      );
      expect(run.exitCode, String(run.stderr)).toBe(0);
      await stopAll([worker]);
      // Every item but the upload (done where the file is) went to the worker: 3 web/LLM calls and the model tasks.
      const tasks = Object.values(gateway.stats().tasks.submitted).reduce((a, b) => a + b, 0);
      expect(Number(/stopped after (\d+) jobs/.exec(worker.stderr())?.[1])).toBe(3 + tasks);
    } finally {
      await stopAll([worker]);
      await gateway.close();
    }
  });

  it('runs a runs_on: worker command there: its input file sent, the file it writes brought back', {
    timeout: 120_000,
  }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(4));
    const worker = await startWorker(gateway, 'files-w', 'files');
    try {
      const recipe = join(dir, 'files.yaml');
      await writeFile(
        recipe,
        [
          'version: 1',
          'name: files',
          'steps:',
          '  image:',
          `    uses: ${SLUG}`,
          '    for_each: ["a fox", "an owl"]',
          '    with: { prompt: "${{ item }}", aspect_ratio: "1:1" }',
          '  measure:',
          '    for_each: ${{ steps.image.outputs }}',
          '    runs_on: worker',
          '    run: wc -c < "${{ item.path }}" > outputs/size-${{ index }}.txt && pwd',
          '',
        ].join('\n'),
      );
      const run = await execa(
        'node',
        [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'files', '--json'],
        {
          reject: false,
          env: envFor(gateway, 'files-coordinator'),
        },
      );
      expect(run.exitCode, String(run.stderr)).toBe(0);
      const out = JSON.parse(String(run.stdout));
      const runDir: string = out.run_dir;
      for (const index of [0, 1]) {
        const size = Number((await readFile(join(runDir, 'outputs', `size-${index}.txt`), 'utf8')).trim());
        const image = await readFile(join(runDir, 'outputs', `image-${index + 1}.png`));
        expect(size).toBe(image.length);
      }
      // It ran on the worker, in a folder of its own, not in the run folder.
      const finished = (await readFile(join(runDir, 'journal.jsonl'), 'utf8'))
        .split('\n')
        .filter((line) => line.includes('"item-finished"') && line.includes('"measure"'))
        .map((line) => JSON.parse(line) as { outputs: { stdout: string } });
      expect(finished).toHaveLength(2);
      for (const { outputs } of finished) expect(outputs.stdout).toMatch(/pipeline-worker-.*\/run$/);
    } finally {
      await stopAll([worker]);
      await gateway.close();
    }
  });
});

describe.skipIf(!redisTestsRun)('a worker and its Redis', () => {
  it('stops taking jobs when it loses Redis and says so, and takes them again when Redis is back', {
    timeout: 120_000,
  }, async () => {
    const own = await startRedis();
    const gateway = await startLocalGateway(gatewayOptions(5));
    const worker = await startWorker(gateway, 'lost-w', 'lost', own.url);
    try {
      await own.stop();
      await waitFor(
        () => /worker: lost Redis at redis:\/\/127\.0\.0\.1:\d+: taking no jobs/.test(worker.stderr()),
        worker.stderr,
      );
      await own.start();
      await waitFor(() => worker.stderr().includes('taking jobs again'), worker.stderr);
    } finally {
      await stopAll([worker]);
      await gateway.close();
      await own.stop();
    }
  });
});

describe('pipeline worker at the door', () => {
  it('needs a Redis: exit 2 without one, and exit 2 naming it (password hidden) when it cannot be reached', async () => {
    const env = {
      PIPELINE_HOME: join(tmpdir(), `workers-door-${process.pid}`),
      PIPELINE_BASE_URL: 'http://127.0.0.1:9/api/v1',
      PIPELINE_API_KEY: 'door-key',
      CI: 'true',
    };
    const none = await execa('node', [cli, 'worker'], { reject: false, env, extendEnv: false });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('pipeline worker needs --redis URL (or PIPELINE_REDIS_URL)');
    const unreachable = await execa('node', [cli, 'worker', '--redis', `redis://:${PASSWORD}@127.0.0.1:1`], {
      reject: false,
      env,
      extendEnv: false,
    });
    expect(unreachable.exitCode).toBe(2);
    expect(unreachable.stderr).toContain('cannot reach Redis at redis://:***@127.0.0.1:1');
    // A worker cannot go on without the Redis its jobs are on: no advice to run without it.
    expect(unreachable.stderr).toContain("start Redis: the workers' jobs are queued there");
    expect(unreachable.stderr).not.toContain('without --redis');
    expect(unreachable.stderr).not.toContain(PASSWORD);
    const noTakeover = await execa('node', [cli, 'worker', '--redis', 'redis://127.0.0.1:1', '--takeover-after', '0'], {
      reject: false,
      env,
      extendEnv: false,
    });
    expect(noTakeover.exitCode).toBe(2);
    expect(noTakeover.stderr).toContain('--takeover-after');
  });
});

describe('pipeline run --workers at the door', () => {
  it('refuses --local: the workers could not reach a gateway inside this process', async () => {
    const recipe = join(tmpdir(), `workers-local-${process.pid}.yaml`);
    await writeFile(recipe, batchRecipe(1, 'x'));
    const result = await execa('node', [cli, 'run', recipe, '--local', '--workers', 'redis://127.0.0.1:1'], {
      reject: false,
      env: { PIPELINE_HOME: join(tmpdir(), `workers-local-${process.pid}`), CI: 'true' },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--workers needs a gateway the workers reach too');
    // A Redis that does not answer is named as --workers', with no --redis to drop.
    const down = await execa('node', [cli, 'run', recipe, '--workers', 'redis://127.0.0.1:1'], {
      reject: false,
      env: {
        PIPELINE_HOME: join(tmpdir(), `workers-local-${process.pid}`),
        PIPELINE_BASE_URL: 'http://127.0.0.1:1/api/v1',
        PIPELINE_API_KEY: 'sk-test',
        CI: 'true',
      },
    });
    expect(down.exitCode).toBe(2);
    expect(down.stderr).toContain("start Redis: the workers' jobs are queued there");
    expect(down.stderr).not.toContain('--redis');
    const queueAlone = await execa('node', [cli, 'run', recipe, '--local', '--workers-queue', 'assets'], {
      reject: false,
      env: { PIPELINE_HOME: join(tmpdir(), `workers-local-${process.pid}`), CI: 'true' },
    });
    expect(queueAlone.exitCode).toBe(2);
    expect(queueAlone.stderr).toBe(
      'pipeline: --workers-queue names the queue of --workers REDIS_URL, which is not given',
    );
    await rm(recipe, { force: true });
  });
});
