/**
 * Workers and coordinators that die mid-run, as processes on one real Redis against the local
 * gateway: nothing paid twice when a worker is killed, a coordinator that says its workers vanished
 * and can be resumed, a coordinator killed and resumed from the tasks its workers recorded.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { startLocalGateway } from '../../src/local-gateway/index.js';
import { redisTestsRun } from '../support/redis-server.js';
import {
  batchRecipe,
  cli,
  dir,
  envFor,
  freezeAtQuietMoment,
  gatewayOptions,
  redis,
  SLUG,
  startWorker,
  stopAll,
  useFolderAndRedis,
  waitFor,
  type WorkerProcess,
} from './harness.js';

useFolderAndRedis();

describe.skipIf(!redisTestsRun)('workers and coordinators that die mid-run', () => {
  it('finish when one worker is SIGKILLed mid-run, with no task paid twice', { timeout: 300_000 }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(2));
    const workers: WorkerProcess[] = [];
    try {
      for (const tag of ['a', 'b', 'c']) workers.push(await startWorker(gateway, `kill-w${tag}`, 'kill'));
      const recipe = join(dir, 'kill.yaml');
      await writeFile(recipe, batchRecipe(60, 'kill'));
      const running = {
        process: execa('node', [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'kill', '--json'], {
          reject: false,
          env: envFor(gateway, 'kill-coordinator'),
        }),
      };
      await waitFor(
        () => (gateway.stats().tasks.submitted[SLUG] ?? 0) >= 20,
        () => JSON.stringify(gateway.stats().tasks),
        120_000,
      );
      await freezeAtQuietMoment('kill', workers[0]!.process.pid!, { polling: true });
      workers[0]!.process.kill('SIGKILL');
      const run = await running.process;
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(JSON.parse(String(run.stdout)).files).toHaveLength(60);
      // Its jobs were taken over by polling their tasks: 60 submissions, not one more.
      expect(gateway.stats().tasks.submitted).toEqual({ [SLUG]: 60 });
      const survivors = `${workers[1]!.stderr()}${workers[2]!.stderr()}`;
      expect(survivors).toMatch(
        /taking over image\[\d+\] \(row 1 of run [\w-]+\) of a lost worker: polling its task task_\w+, not submitting again/,
      );
    } finally {
      await stopAll(workers);
      await gateway.close();
    }
  });

  it('a coordinator whose workers all vanish says so, and the run resumes with a new worker', {
    timeout: 300_000,
  }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(3));
    const first = await startWorker(gateway, 'vanish-w1', 'vanish');
    const recipe = join(dir, 'vanish.yaml');
    await writeFile(recipe, batchRecipe(40, 'vanish'));
    let stderr = '';
    const env = envFor(gateway, 'vanish-coordinator', { PIPELINE_WORKERS_SILENCE_MS: '3000' });
    const coordinator = execa('node', [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'vanish'], {
      reject: false,
      env,
    });
    coordinator.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const wrapped = { process: coordinator };
    let second: WorkerProcess | undefined;
    try {
      await waitFor(
        () => (gateway.stats().tasks.submitted[SLUG] ?? 0) >= 4,
        () => stderr,
        120_000,
      );
      await freezeAtQuietMoment('vanish', first.process.pid!);
      first.process.kill('SIGKILL');
      await waitFor(
        () =>
          /no worker alive on queue 'vanish'.*start one \(pipeline worker --redis URL --queue vanish\)/.test(stderr),
        () => stderr,
        60_000,
      );
      wrapped.process.kill('SIGINT');
      const stopped = await wrapped.process;
      expect(stopped.exitCode, stderr).toBe(130);
      const runId = /run (\S+): 1 step/.exec(stderr)?.[1];
      expect(runId, stderr).toBeDefined();
      // The resume it prints goes to the workers again, on their queue: pasted, it is what runs here.
      // Its password is never printed: the user puts it where the hint says.
      const password = new URL(redis.url).password;
      const hint =
        /Resume with:\n {2}npx media-pipeline resume (.+?) {2}# put the Redis password in place of REDIS_PASSWORD$/m.exec(
          stderr,
        )?.[1];
      expect(hint).toBe(`${runId} --workers ${redis.url.replace(password, 'REDIS_PASSWORD')} --workers-queue vanish`);
      expect(stderr).not.toContain(password);
      const submittedBefore = gateway.stats().tasks.submitted[SLUG] ?? 0;
      second = await startWorker(gateway, 'vanish-w2', 'vanish');
      const pasted = hint!.replace('REDIS_PASSWORD', password).split(' ');
      const resumed = await execa('node', [cli, 'resume', ...pasted, '--json'], { reject: false, env });
      expect(resumed.exitCode, String(resumed.stderr)).toBe(0);
      expect(JSON.parse(String(resumed.stdout)).files).toHaveLength(40);
      // What was submitted before the stop was polled, not submitted again.
      expect(gateway.stats().tasks.submitted[SLUG]).toBe(40);
      expect(submittedBefore).toBeGreaterThanOrEqual(4);
    } finally {
      await stopAll([first, ...(second ? [second] : [])]);
      await gateway.close();
    }
  });

  it('a coordinator SIGKILLed mid-run is resumed from the tasks its workers recorded, none paid twice', {
    timeout: 300_000,
  }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(6));
    const workers = [await startWorker(gateway, 'crash-w1', 'crash'), await startWorker(gateway, 'crash-w2', 'crash')];
    const recipe = join(dir, 'crash.yaml');
    await writeFile(recipe, batchRecipe(60, 'crash'));
    const env = envFor(gateway, 'crash-coordinator');
    let stderr = '';
    const coordinator = execa('node', [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'crash'], {
      reject: false,
      env,
    });
    coordinator.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const wrapped = { process: coordinator };
    try {
      await waitFor(
        () => (gateway.stats().tasks.submitted[SLUG] ?? 0) >= 10,
        () => stderr,
        120_000,
      );
      wrapped.process.kill('SIGKILL');
      await wrapped.process;
      // The workers go on with the jobs already queued: wait until they have sent some that the
      // killed coordinator never heard of, so the resume must find them in the workers' records.
      const atKill = gateway.stats().tasks.submitted[SLUG] ?? 0;
      await waitFor(
        () => (gateway.stats().tasks.submitted[SLUG] ?? 0) >= atKill + 2,
        () => stderr,
        120_000,
      );
      const runId = /run (\S+): 1 step/.exec(stderr)?.[1];
      expect(runId, stderr).toBeDefined();
      const resumed = await execa(
        'node',
        [cli, 'resume', runId!, '--workers', redis.url, '--workers-queue', 'crash', '--json'],
        { reject: false, env },
      );
      expect(resumed.exitCode, String(resumed.stderr)).toBe(0);
      expect(JSON.parse(String(resumed.stdout)).files).toHaveLength(60);
      // The jobs the killed coordinator had queued were run by the workers or taken off the queue; never sent twice.
      expect(gateway.stats().tasks.submitted[SLUG]).toBe(60);
      expect(String(resumed.stderr)).toMatch(/recorded by a worker after the earlier run stopped, is read/);
    } finally {
      await stopAll(workers);
      await gateway.close();
    }
  });
});
