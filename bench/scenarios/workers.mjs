// workers: `pipeline run --workers` with `pipeline worker` processes on one Redis. The 120-image batch
// of batch-images with 1 worker and with 3 (the budget they share keeps it rate-bound: the figure is
// its ratio to the bound), and a CPU-bound `run:` batch (`runs_on: worker`) with 1 worker and 2.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { apiRequests, batchRecipe, CONCURRENCY, GATEWAY_FLAGS, lowerBoundMs } from './batch-images.mjs';
import { startRedis } from './shared-key.mjs';
import { cli, fixed, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

/** `pipeline worker` processes on the gateway and Redis, each once it says it takes jobs. */
async function startWorkers(gateway, redisUrl, queue, count, concurrency) {
  const home = await mkdtemp(join(tmpdir(), 'bench-workers-'));
  const workers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const child = execa(
        'node',
        [cli, 'worker', '--redis', redisUrl, '--queue', queue, '--concurrency', String(concurrency)],
        {
          reject: false,
          env: {
            PIPELINE_HOME: join(home, `w${i}`),
            PIPELINE_BASE_URL: gateway.base_url,
            PIPELINE_API_KEY: gateway.api_key,
            CI: 'true',
          },
        },
      );
      await new Promise((resolve, reject) => {
        let text = '';
        child.stderr.on('data', (chunk) => {
          text += chunk;
          if (text.includes('takes jobs')) resolve();
        });
        child.once('exit', () => reject(new Error(`a worker did not start: ${text}`)));
      });
      return { child };
    }),
  );
  return {
    async stop() {
      for (const { child } of workers) child.kill('SIGTERM');
      await Promise.all(workers.map(({ child }) => child));
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The image batch through `count` workers, the gateway's 8 tasks at once shared between them. */
async function imageSide(redisUrl, tasks, count) {
  const gateway = await startGateway(GATEWAY_FLAGS);
  const queue = `images-${count}`;
  const workers = await startWorkers(gateway, redisUrl, queue, count, Math.ceil(CONCURRENCY / count));
  try {
    const ours = await runPipeline(gateway, batchRecipe(tasks), ['--workers', redisUrl, '--workers-queue', queue]);
    const stats = await gateway.stats();
    return {
      makespan_ms: ours.makespanMs,
      makespan_over_bound: ratio(ours.makespanMs, lowerBoundMs(tasks)),
      requests_per_task: apiRequests(stats) / tasks,
      rate_limited: stats.rate_limited,
      submitted: Object.values(stats.tasks.submitted).reduce((a, b) => a + b, 0),
    };
  } finally {
    await workers.stop();
    await gateway.stop();
  }
}

/** A `run:` step of `items` CPU-bound commands (a loop in a fresh node), each on a worker. */
function cpuRecipe(items, loops) {
  const list = Array.from({ length: items }, (_, i) => i).join(', ');
  const script = `let x = 0; for (let i = 0; i < ${loops}; i++) x = (x + i * i) % 1000003; console.log(x)`;
  return `version: 1\nname: cpu-batch\nsteps:\n  crunch:\n    for_each: [${list}]\n    runs_on: worker\n    run: [node, -e, "${script}"]\n`;
}

async function cpuSide(redisUrl, items, loops, count) {
  const gateway = await startGateway(GATEWAY_FLAGS);
  const queue = `cpu-${count}`;
  const workers = await startWorkers(gateway, redisUrl, queue, count, 1);
  try {
    const ours = await runPipeline(gateway, cpuRecipe(items, loops), ['--workers', redisUrl, '--workers-queue', queue]);
    return { makespan_ms: ours.makespanMs };
  } finally {
    await workers.stop();
    await gateway.stop();
  }
}

export async function run({ quick }) {
  if (spawnSync('redis-server', ['--version']).status !== 0 && !process.env.CI) {
    return { line: 'workers: skipped, no redis-server on PATH', figures: { skipped: 'no redis-server on PATH' } };
  }
  const tasks = quick ? 12 : 120;
  const items = quick ? 4 : 16;
  const loops = quick ? 50_000_000 : 200_000_000;
  const redis = await startRedis();
  try {
    const one = await imageSide(redis.url, tasks, 1);
    const three = await imageSide(redis.url, tasks, 3);
    const cpuOne = await cpuSide(redis.url, items, loops, 1);
    const cpuTwo = await cpuSide(redis.url, items, loops, 2);
    const bound = lowerBoundMs(tasks);
    const figures = {
      tasks,
      lower_bound_ms: bound,
      images_1_worker: one,
      images_3_workers: three,
      cpu_items: items,
      cpu_1_worker: cpuOne,
      cpu_2_workers: cpuTwo,
      cpu_speedup: ratio(cpuOne.makespan_ms, cpuTwo.makespan_ms),
    };
    const images = (s) =>
      `${seconds(s.makespan_ms)} (×${fixed(s.makespan_over_bound)}), ${s.submitted} submitted, ${s.rate_limited} 429s`;
    const head = `workers: ${tasks} images, bound ${seconds(bound)}`;
    const cpu = `${items} CPU items ${seconds(cpuOne.makespan_ms)} with 1 worker, ${seconds(cpuTwo.makespan_ms)} with 2 (×${fixed(figures.cpu_speedup)})`;
    return { line: `${head} | 1 worker ${images(one)} | 3 workers ${images(three)} | ${cpu}`, figures };
  } finally {
    await redis.stop();
  }
}
