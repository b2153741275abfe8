/**
 * Jobs of `pipeline run --workers` that their first worker cannot finish, and that the run gets done
 * anyway, paying nothing twice:
 * - Redis restarts without its data while the workers poll the tasks they created: the jobs and
 *   their submission records are gone, but the run heard each task id from its worker (and
 *   journaled it), so it reads those tasks itself rather than calling their outcome unknown;
 * - a worker started with another gateway address passes the run's jobs on to another worker;
 * - Redis going away while items are queued there is said, and its return.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startLocalGateway } from '../../src/local-gateway/index.js';
import { Coordinator } from '../../src/workers/coordinator.js';
import { modelJob } from '../support/model-job.js';
import { redisTestsRun } from '../support/redis-server.js';
import {
  batchRecipe,
  cli,
  dir,
  envFor,
  gatewayOptions,
  redis,
  SLUG,
  startWorker,
  stopAll,
  useFolderAndRedis,
  waitFor,
} from './harness.js';

useFolderAndRedis();

/** The journal lines of the one run under `home`, or none yet. */
function journalOf(home: string): Array<{ type: string; task_id?: string }> {
  const runs = join(dir, home, 'runs');
  const [id] = existsSync(runs) ? readdirSync(runs) : [];
  const path = id && join(runs, id, 'journal.jsonl');
  if (!path || !existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe.skipIf(!redisTestsRun)('a Redis that loses its data while the workers poll their tasks', () => {
  it('reads the tasks the workers told of from the run itself: it succeeds, and nothing is sent twice', {
    timeout: 120_000,
  }, async () => {
    // Tasks of about 7 s: still running when Redis forgets everything.
    const gateway = await startLocalGateway({ ...gatewayOptions(5), latencyScale: 2 });
    const workers = [await startWorker(gateway, 'lost-w', 'lost')];
    try {
      const recipe = join(dir, 'lost.yaml');
      await writeFile(recipe, batchRecipe(2, 'lost'));
      const run = execa('node', [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'lost', '--json'], {
        reject: false,
        env: envFor(gateway, 'lost-coordinator'),
      });
      let stderr = '';
      run.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await waitFor(
        () => journalOf('lost-coordinator').filter((event) => event.type === 'task-submitted').length === 2,
        () => stderr,
      );
      const client = new Redis(redis.url);
      await client.flushall();
      client.disconnect();
      const ended = await run;
      expect(ended.exitCode, stderr).toBe(0);
      expect(JSON.parse(String(ended.stdout)).files).toHaveLength(2);
      expect(gateway.stats().tasks.submitted).toEqual({ [SLUG]: 2 });
      const submitted = journalOf('lost-coordinator').filter((event) => event.type === 'task-submitted');
      for (const { task_id: taskId } of submitted)
        expect(stderr).toContain(
          `its job is gone from Redis (restarted without its data?); its task ${taskId} is read from this process`,
        );
    } finally {
      await stopAll(workers);
      await gateway.close();
    }
  });
});

describe.skipIf(!redisTestsRun)('a worker started with another gateway address', () => {
  it('passes the jobs on, says why once, and a worker on the run’s gateway runs them: nothing fails', {
    timeout: 120_000,
  }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(6));
    // The same gateway by another name: the worker cannot know it is the one the run uses.
    const elsewhere = gateway.baseUrl.replace('127.0.0.1', 'localhost');
    const workers = [
      await startWorker(gateway, 'elsewhere-w', 'elsewhere', redis.url, { PIPELINE_BASE_URL: elsewhere }),
    ];
    try {
      const recipe = join(dir, 'elsewhere.yaml');
      await writeFile(recipe, batchRecipe(3, 'elsewhere'));
      const run = execa(
        'node',
        [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'elsewhere', '--json'],
        { reject: false, env: envFor(gateway, 'elsewhere-coordinator') },
      );
      let stderr = '';
      run.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const reason = `uses the gateway at ${elsewhere}, the run at ${gateway.baseUrl}: start workers with the run's PIPELINE_BASE_URL`;
      await waitFor(
        () => stderr.includes(reason),
        () => stderr,
      );
      expect(stderr).toMatch(
        new RegExp(
          `^⚠ worker \\S+ ${reason.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}; its jobs wait for another worker$`,
          'm',
        ),
      );
      expect(workers[0]!.stderr()).toContain(`passing on the jobs of run `);
      expect(gateway.stats().tasks.submitted).toEqual({});
      workers.push(await startWorker(gateway, 'right-w', 'elsewhere'));
      const ended = await run;
      expect(ended.exitCode, stderr).toBe(0);
      expect(gateway.stats().tasks.submitted).toEqual({ [SLUG]: 3 });
      // Said once by each side, however many times the jobs were passed on.
      expect(stderr.split(reason).length - 1).toBe(1);
      expect(workers[0]!.stderr().split('passing on the jobs of run').length - 1).toBe(1);
    } finally {
      await stopAll(workers);
      await gateway.close();
    }
  });
});

describe.skipIf(!redisTestsRun)('a run whose Redis goes away while items are queued there', () => {
  it('says so once, and once more when Redis is back', { timeout: 60_000 }, async () => {
    const said: string[] = [];
    const coordinator = await Coordinator.open({
      redisUrl: redis.url,
      shownUrl: 'redis://:***@127.0.0.1',
      queue: 'away',
      runId: 'run-away',
      gateway: 'http://127.0.0.1:1/api/v1',
      passEnv: [],
      note: (line) => said.push(line),
      sweepMs: 200,
    });
    const stop = new AbortController();
    try {
      // No worker: the job waits in the queue.
      const waiting = coordinator.model(modelJob(), () => {}, stop.signal);
      // Queued (its record and job written) before Redis goes.
      const client = new Redis(redis.url);
      while ((await client.keys('bull:away:*')).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      client.disconnect();
      await redis.stop();
      await waitFor(
        () => said.some((line) => line.startsWith('⚠ lost Redis')),
        () => said.join('\n'),
      );
      await redis.start();
      await waitFor(
        () => said.includes('Redis at redis://:***@127.0.0.1 is back: the queued items go on'),
        () => said.join('\n'),
      );
      expect(said.filter((line) => line.startsWith('⚠ lost Redis'))).toEqual([
        '⚠ lost Redis at redis://:***@127.0.0.1: the item queued there waits for it to come back',
      ]);
      stop.abort();
      await waiting;
    } finally {
      await coordinator.close();
    }
  });
});
