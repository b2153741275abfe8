/**
 * `pipeline run --workers` and `pipeline worker`, as processes on one real Redis against the local
 * gateway: the work spread, nothing paid twice when a worker is killed, a coordinator that says
 * its workers vanished and can be resumed, a worker that says it lost Redis, and `runs_on: worker`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { type RedisServer, redisTestsRun, startRedis } from '../support/redis-server.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const SLUG = 'vendor-a/vendor-a-v3-t2i';
const PASSWORD = 'workers-pass-51c2';

let dir: string;
let redis: RedisServer;

beforeAll(async () => {
  if (!redisTestsRun) return;
  dir = await mkdtemp(join(tmpdir(), 'pipeline-workers-'));
  redis = await startRedis(PASSWORD);
});
afterAll(async () => {
  if (!redisTestsRun) return;
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
});

function batchRecipe(count: number, tag: string): string {
  const prompts = Array.from({ length: count }, (_, i) => `"${tag} shot ${i}"`).join(', ');
  const withLine = '    with: { prompt: "${{ item }}", aspect_ratio: "1:1" }\n';
  return `version: 1\nname: workers\nsteps:\n  image:\n    uses: ${SLUG}\n    for_each: [${prompts}]\n${withLine}`;
}

const envFor = (gateway: LocalGateway, home: string, extra: Record<string, string> = {}) => ({
  PIPELINE_HOME: join(dir, home),
  PIPELINE_BASE_URL: gateway.baseUrl,
  PIPELINE_API_KEY: gateway.apiKey,
  CI: 'true',
  ...extra,
});

interface WorkerProcess {
  process: ResultPromise;
  stderr(): string;
}

/** A `pipeline worker` process, once it says it takes jobs. Wrapped: a bare execa promise would be awaited. */
async function startWorker(
  gateway: LocalGateway,
  home: string,
  queue: string,
  url = redis.url,
): Promise<WorkerProcess> {
  const child = execa('node', [cli, 'worker', '--redis', url, '--queue', queue, '--concurrency', '4'], {
    reject: false,
    env: envFor(gateway, home),
  });
  let text = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  await waitFor(
    () => text.includes('takes jobs'),
    () => text,
  );
  return { process: child, stderr: () => text };
}

async function waitFor(condition: () => boolean, describe: () => string, ms = 30_000): Promise<void> {
  for (const started = Date.now(); !condition(); ) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting; output so far:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits for a moment when no submission of the queue is on the wire (each record is `submitted`,
 * none `submitting`), for a kill that tests the take-over. A kill while a POST is on the wire
 * leaves that one submission's outcome unknown, as in one process: the rule, not what is tested.
 */
async function quietMoment(queue: string, options: { pollingWorker?: number } = {}): Promise<void> {
  const client = new Redis(redis.url);
  try {
    for (;;) {
      const keys = await client.keys(`pipeline:workers:${queue}:submission:*`);
      const records = await Promise.all(
        keys.map(
          async (key): Promise<Record<string, string> & { key: string }> => ({ ...(await client.hgetall(key)), key }),
        ),
      );
      if (records.some((record) => record.state === 'submitting')) continue;
      if (options.pollingWorker === undefined) return;
      // With `pollingWorker` (a process id): also that worker polls a task it sent (its record says
      // submitted, its job is active), so killing it leaves a task for another worker to take over.
      const active = new Set(await client.lrange(`bull:${queue}:active`, 0, -1));
      const polled = records.some(
        (record) =>
          record.state === 'submitted' &&
          record.owner?.includes(`-${options.pollingWorker}-`) &&
          active.has(record.key.slice(record.key.lastIndexOf(':') + 1)),
      );
      if (polled) return;
    }
  } finally {
    client.disconnect();
  }
}

async function stopAll(workers: WorkerProcess[]): Promise<void> {
  for (const worker of workers) if (worker.process.exitCode === null) worker.process.kill('SIGTERM');
  await Promise.all(workers.map((worker) => worker.process));
}

/** Every value stored in Redis, as text: what a secret must never be part of. */
async function everythingIn(url: string): Promise<string> {
  const client = new Redis(url);
  try {
    const parts: string[] = [];
    for (const key of await client.keys('*')) {
      const type = await client.type(key);
      parts.push(key);
      if (type === 'string') parts.push((await client.getBuffer(key))?.toString('latin1') ?? '');
      if (type === 'hash') parts.push(JSON.stringify(await client.hgetall(key)));
      if (type === 'list') parts.push(JSON.stringify(await client.lrange(key, 0, -1)));
      if (type === 'set') parts.push(JSON.stringify(await client.smembers(key)));
      if (type === 'zset') parts.push(JSON.stringify(await client.zrange(key, '0', '-1')));
      if (type === 'stream') parts.push(JSON.stringify(await client.xrange(key, '-', '+')));
    }
    return parts.join('\n');
  } finally {
    client.disconnect();
  }
}

const gatewayOptions = (seed: number) => ({
  rpm: 120,
  windowSeconds: 6,
  maxConcurrent: 12,
  latencyScale: 0.25,
  latencyJitter: 0,
  seed,
});

describe.skipIf(!redisTestsRun)('three workers and a coordinator on one Redis', () => {
  it('run a 120-image batch: every item once, no 429, no secret in Redis', { timeout: 300_000 }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(1));
    const workers: WorkerProcess[] = [];
    try {
      for (const tag of ['a', 'b', 'c']) workers.push(await startWorker(gateway, `all-w${tag}`, 'all'));
      const recipe = join(dir, 'all.yaml');
      await writeFile(recipe, batchRecipe(120, 'all'));
      const run = await execa(
        'node',
        [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'all', '--json'],
        { reject: false, env: envFor(gateway, 'all-coordinator') },
      );
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(JSON.parse(String(run.stdout)).files).toHaveLength(120);
      const stats = gateway.stats();
      expect(stats.tasks.submitted).toEqual({ [SLUG]: 120 });
      expect(stats.rate_limited).toBe(0);
      await stopAll(workers);
      // The work was spread: each worker says how many jobs it ran when it stops.
      const counts = workers.map((worker) => Number(/stopped after (\d+) jobs/.exec(worker.stderr())?.[1]));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(120);
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

  it('finish when one worker is SIGKILLed mid-run, with no task paid twice', { timeout: 300_000 }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(2));
    const workers: WorkerProcess[] = [];
    try {
      for (const tag of ['a', 'b', 'c']) workers.push(await startWorker(gateway, `kill-w${tag}`, 'kill'));
      const recipe = join(dir, 'kill.yaml');
      await writeFile(recipe, batchRecipe(120, 'kill'));
      const running = {
        process: execa('node', [cli, 'run', recipe, '--workers', redis.url, '--workers-queue', 'kill', '--json'], {
          reject: false,
          env: envFor(gateway, 'kill-coordinator'),
        }),
      };
      await waitFor(
        () => (gateway.stats().tasks.submitted[SLUG] ?? 0) >= 30,
        () => JSON.stringify(gateway.stats().tasks),
        120_000,
      );
      await quietMoment('kill', { pollingWorker: workers[0]!.process.pid! });
      workers[0]!.process.kill('SIGKILL');
      const run = await running.process;
      expect(run.exitCode, String(run.stderr)).toBe(0);
      expect(JSON.parse(String(run.stdout)).files).toHaveLength(120);
      // Its jobs were taken over by polling their tasks: 120 submissions, not one more.
      expect(gateway.stats().tasks.submitted).toEqual({ [SLUG]: 120 });
      const survivors = `${workers[1]!.stderr()}${workers[2]!.stderr()}`;
      expect(survivors).toMatch(
        /taking over image\[\d+\] of a lost worker: polling its task task_\w+, not submitting again/,
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
      await quietMoment('vanish');
      first.process.kill('SIGKILL');
      await waitFor(
        () => /no worker alive on queue 'vanish'/.test(stderr),
        () => stderr,
        60_000,
      );
      wrapped.process.kill('SIGINT');
      const stopped = await wrapped.process;
      expect(stopped.exitCode, stderr).toBe(130);
      const runId = /run (\S+): 1 steps/.exec(stderr)?.[1];
      expect(runId, stderr).toBeDefined();
      const submittedBefore = gateway.stats().tasks.submitted[SLUG] ?? 0;
      second = await startWorker(gateway, 'vanish-w2', 'vanish');
      const resumed = await execa(
        'node',
        [cli, 'resume', runId!, '--workers', redis.url, '--workers-queue', 'vanish', '--json'],
        { reject: false, env },
      );
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
      const runId = /run (\S+): 1 steps/.exec(stderr)?.[1];
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

  it('runs the launch-kit example on a worker: web search, web fetch, LLM, and model items with an uploaded file', {
    timeout: 180_000,
  }, async () => {
    const gateway = await startLocalGateway(gatewayOptions(7));
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
    expect(unreachable.stderr).not.toContain(PASSWORD);
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
    await rm(recipe, { force: true });
  });
});
