import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { budgetScope } from '../../src/scheduler/redis-connection.js';
import { pipelineInProcess } from '../support/cli.js';
import { http } from '../support/http.js';
import { redisTestsRun, startRedis, type RedisServer } from '../support/redis-server.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const SLUG = 'vendor-a/vendor-a-v3-t2i';
const PASSWORD = 'budget-pass-7f3a';

function batchRecipe(count: number, tag: string): string {
  const prompts = Array.from({ length: count }, (_, i) => `"${tag} shot ${i}"`).join(', ');
  const withLine = '    with: { prompt: "${{ item }}", aspect_ratio: "1:1" }\n';
  const step = `  image:\n    uses: ${SLUG}\n    for_each: [${prompts}]\n${withLine}`;
  return `version: 1\nname: shared\nsettings: { concurrency: 8 }\nsteps:\n${step}`;
}

let dir: string;
let redis: RedisServer;

beforeAll(async () => {
  if (!redisTestsRun) return;
  dir = await mkdtemp(join(tmpdir(), 'pipeline-shared-'));
  redis = await startRedis(PASSWORD);
});
afterAll(async () => {
  if (!redisTestsRun) return;
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Three `pipeline run` processes on one key and one Redis, each with its own home (as on three
 * machines). Each is wrapped: a bare execa promise would make Promise.all wait for the processes.
 */
async function startThree(
  gateway: LocalGateway,
  images: number,
  name: string,
): Promise<Array<{ process: ResultPromise }>> {
  return Promise.all(
    ['a', 'b', 'c'].map(async (tag) => {
      const recipe = join(dir, `${name}-${tag}.yaml`);
      await writeFile(recipe, batchRecipe(images, `${name} ${tag}`));
      const env = {
        PIPELINE_HOME: join(dir, `${name}-${tag}`),
        PIPELINE_BASE_URL: gateway.baseUrl,
        PIPELINE_API_KEY: gateway.apiKey,
        PIPELINE_REDIS_URL: redis.url,
        CI: 'true',
      };
      return { process: execa('node', [cli, 'run', recipe, '--json'], { reject: false, env, extendEnv: true }) };
    }),
  );
}

describe.skipIf(!redisTestsRun)('three processes on one key and one Redis', () => {
  it('follow one window: 20 images each against 30 requests per 6 s, no 429', {
    timeout: 240_000,
  }, async () => {
    const gateway = await startLocalGateway({
      rpm: 30,
      windowSeconds: 6,
      maxConcurrent: 8,
      latencyScale: 2 / 3.5,
      latencyJitter: 0,
      seed: 1,
    });
    try {
      const results = await Promise.all((await startThree(gateway, 20, 'all')).map((run) => run.process));
      for (const result of results) {
        expect(result.exitCode, String(result.stderr)).toBe(0);
        expect(JSON.parse(String(result.stdout)).files).toHaveLength(20);
        expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
      }
      const stats = gateway.stats();
      expect(stats.tasks.submitted).toEqual({ [SLUG]: 60 });
      // The requests each process sends before its run (the gateway check) wait their turn too: one
      // sent past the budget took a place the others had counted on (a 429 when a late process
      // started in a spent window).
      expect(stats.rate_limited).toBe(0);
    } finally {
      await gateway.close();
    }
  });

  it('finish when Redis stops mid-run: exit 0, one warning each, nothing submitted twice', {
    timeout: 240_000,
  }, async () => {
    const gateway = await startLocalGateway({
      rpm: 30,
      windowSeconds: 6,
      maxConcurrent: 8,
      latencyScale: 2 / 3.5,
      latencyJitter: 0,
      seed: 2,
    });
    try {
      const running = await startThree(gateway, 12, 'lost');
      // Stop Redis once the three are well under way.
      for (let i = 0; i < 6000 && (gateway.stats().tasks.submitted[SLUG] ?? 0) < 9; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(gateway.stats().tasks.submitted[SLUG]).toBeGreaterThanOrEqual(9);
      await redis.stop();
      const results = await Promise.all(running.map((run) => run.process));
      await redis.start();
      for (const result of results) {
        expect(result.exitCode, String(result.stderr)).toBe(0);
        expect(JSON.parse(String(result.stdout)).files).toHaveLength(12);
        const warnings =
          String(result.stderr).match(/warning: lost Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/g) ?? [];
        expect(warnings, String(result.stderr)).toHaveLength(1);
        expect(String(result.stderr)).not.toContain(PASSWORD);
      }
      expect(gateway.stats().tasks.submitted).toEqual({ [SLUG]: 36 });
    } finally {
      await gateway.close();
    }
  });
});

describe.skipIf(!redisTestsRun)('--redis at the start', () => {
  it('exits 2 naming the URL, password hidden, when Redis cannot be reached', async () => {
    const recipe = join(dir, 'unreachable.yaml');
    await writeFile(recipe, batchRecipe(1, 'x'));
    // Port 1 on loopback: nothing listens there.
    const url = `redis://:${PASSWORD}@127.0.0.1:1`;
    const result = await execa('node', [cli, 'run', recipe, '--local', '--redis', url], {
      reject: false,
      env: { PIPELINE_HOME: join(dir, 'unreachable'), CI: 'true' },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('cannot reach Redis at redis://:***@127.0.0.1:1');
    expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
  });

  it('refuses a URL that is not redis:// or rediss://, naming the flag', async () => {
    const recipe = join(dir, 'bad-url.yaml');
    await writeFile(recipe, batchRecipe(1, 'x'));
    const result = await execa('node', [cli, 'run', recipe, '--local', '--redis', 'http://127.0.0.1:6379'], {
      reject: false,
      env: { PIPELINE_HOME: join(dir, 'bad-url'), CI: 'true' },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--redis (or PIPELINE_REDIS_URL) must be a redis:// or rediss:// URL');
  });

  it('count the few requests of task get in the shared budget, and without Redis warn and go on alone', async () => {
    const gateway = await startLocalGateway({ rpm: 30, windowSeconds: 6, latencyScale: 0.01, seed: 3 });
    const state = `pipeline:budget:{${budgetScope(gateway.apiKey, gateway.baseUrl)}}:state`;
    const commands = new Redis(redis.url);
    try {
      const submitted = await http(gateway).post(`/api/v1/${SLUG}`, { prompt: 'a lighthouse', aspect_ratio: '1:1' });
      const taskId = (submitted.body as { data: { task_id: string } }).data.task_id;
      const env = (redisUrl: string) => ({
        PIPELINE_HOME: join(dir, 'task-get'),
        PIPELINE_BASE_URL: gateway.baseUrl,
        PIPELINE_API_KEY: gateway.apiKey,
        PIPELINE_REDIS_URL: redisUrl,
        CI: 'true',
      });
      expect(await commands.hget(state, 'limit')).toBeNull();
      const shared = await pipelineInProcess(['task', 'get', taskId, '--json'], { env: env(redis.url) });
      expect(shared.exitCode, shared.stderr).toBe(0);
      expect(shared.stderr).toBe('');
      // Its answer's headers went into the key's shared window, where the runs on the key read them.
      expect(await commands.hget(state, 'limit')).toBe('30');
      expect(Number(await commands.hget(state, 'remaining'))).toBeLessThan(30);
      const unreachable = `redis://:${PASSWORD}@127.0.0.1:9`;
      const alone = await pipelineInProcess(['task', 'get', taskId, '--json'], { env: env(unreachable) });
      expect(alone.exitCode, alone.stderr).toBe(0);
      expect(alone.stderr).toMatch(
        /^warning: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:9: .*; this command keeps its own budget$/m,
      );
      expect(alone.stderr).not.toContain(PASSWORD);
      expect(JSON.parse(alone.stdout)).toMatchObject({ task_id: taskId, model_id: SLUG });
    } finally {
      commands.disconnect();
      await gateway.close();
    }
  });
});
