import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway } from '../../src/local-gateway/index.js';
import { redisTestsRun, startRedis, type RedisServer } from '../support/redis-server.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const SLUG = 'vendor-a/vendor-a-v3-t2i';
const PASSWORD = 'restart-pass-51c2';
const ITEMS = 14;

let dir: string;
let redis: RedisServer;

beforeAll(async () => {
  if (!redisTestsRun) return;
  dir = await mkdtemp(join(tmpdir(), 'pipeline-redis-restart-'));
  redis = await startRedis(PASSWORD);
});
afterAll(async () => {
  if (!redisTestsRun) return;
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * `pipeline run --redis` as a separate process, on real time (a child process keeps its own
 * clock): Redis is stopped and started twice while the run goes, each step once the run has
 * shown that it saw the last one and has gone on submitting. Every wait is for a condition, with
 * a deadline, and stops early when the run has exited.
 */
describe.skipIf(!redisTestsRun)('pipeline run --redis through Redis restarts', () => {
  it('finishes with one submission per item when Redis stops, starts, stops and starts again', {
    timeout: 180_000,
  }, async () => {
    const gateway = await startLocalGateway({
      rpm: 8,
      windowSeconds: 5,
      latencyScale: 0.2,
      latencyJitter: 0,
      seed: 12,
    });
    try {
      const prompts = Array.from({ length: ITEMS }, (_, i) => `"restart shot ${i}"`).join(', ');
      const recipe = join(dir, 'r12.yaml');
      await writeFile(
        recipe,
        `version: 1\nname: restart\nsteps:\n  image:\n    uses: ${SLUG}\n    for_each: [${prompts}]\n` +
          '    with: { prompt: "${{ item }}", aspect_ratio: "1:1" }\n',
      );
      const run = execa('node', [cli, 'run', recipe, '--json', '--no-cache', '--concurrency', '4'], {
        reject: false,
        timeout: 150_000,
        env: {
          PIPELINE_HOME: join(dir, 'home'),
          PIPELINE_BASE_URL: gateway.baseUrl,
          PIPELINE_API_KEY: gateway.apiKey,
          PIPELINE_REDIS_URL: redis.url,
          CI: 'true',
        },
      });
      let stderr = '';
      run.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      let exited = false;
      const finished = run.then((result) => {
        exited = true;
        return result;
      });
      const submitted = () => gateway.stats().tasks.submitted[SLUG] ?? 0;
      const count = (pattern: RegExp) => stderr.match(new RegExp(pattern, 'g'))?.length ?? 0;
      const lost = /warning: lost Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/;
      const back = /note: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ is back/;
      const until = async (condition: () => boolean, what: string) => {
        const start = performance.now();
        while (!condition()) {
          if (exited) throw new Error(`the run exited before ${what}: ${stderr}`);
          if (performance.now() - start > 60_000) throw new Error(`timed out waiting for ${what}: ${stderr}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await until(() => submitted() >= 2, 'two submissions');
      await redis.stop();
      await until(() => count(lost) === 1 && submitted() >= 4, 'the first fallback and two more submissions');
      await redis.start();
      await until(() => count(back) === 1 && submitted() >= 6, 'the first rejoin and two more submissions');
      await redis.stop();
      await until(() => count(lost) === 2 && submitted() >= 8, 'the second fallback and two more submissions');
      await redis.start();
      await until(() => count(back) === 2, 'the second rejoin');
      const result = await finished;
      expect(result.exitCode, stderr).toBe(0);
      expect(JSON.parse(String(result.stdout)).files).toHaveLength(ITEMS);
      expect(gateway.stats().tasks.submitted).toEqual({ [SLUG]: ITEMS });
      expect(`${result.stdout}${stderr}`).not.toContain(PASSWORD);
    } finally {
      await gateway.close();
    }
  });
});
