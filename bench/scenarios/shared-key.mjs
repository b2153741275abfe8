// shared-key: three `pipeline run` processes of 40 images each on one API key, with one Redis
// (a shared budget) and without it (three budgets), each side against a fresh gateway.
import { spawn, spawnSync } from 'node:child_process';
import { batchRecipe, GATEWAY_FLAGS, lowerBoundMs, apiRequests } from './batch-images.mjs';
import { fixed, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

const PROCESSES = 3;

/** redis-server on a random port outside the ephemeral range, another port drawn when the bind fails. */
export async function startRedis() {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const child = spawn('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
    const ready = await new Promise((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) resolve(true);
      });
      child.once('error', reject);
      child.once('exit', () =>
        /in use/i.test(output) ? resolve(false) : reject(new Error(`redis-server exited: ${output}`)),
      );
    });
    if (ready)
      return {
        url: `redis://127.0.0.1:${port}`,
        stop: () =>
          new Promise((resolve) => {
            child.once('exit', resolve);
            child.kill('SIGTERM');
          }),
      };
  }
  throw new Error('could not start redis-server');
}

/** The three processes side by side; the makespan runs from the first journal's first event to the last one's last. */
async function side(perProcess, redisUrl) {
  const gateway = await startGateway(GATEWAY_FLAGS);
  const env = redisUrl ? { PIPELINE_REDIS_URL: redisUrl } : {};
  const runs = await Promise.all(
    Array.from({ length: PROCESSES }, () => runPipeline(gateway, batchRecipe(perProcess), [], env)),
  );
  const stats = await gateway.stats();
  await gateway.stop();
  const start = Math.min(...runs.map((run) => run.journal[0].t));
  const end = Math.max(...runs.map((run) => run.journal.at(-1).t));
  const tasks = perProcess * PROCESSES;
  return { makespan_ms: end - start, requests_per_task: apiRequests(stats) / tasks, rate_limited: stats.rate_limited };
}

export async function run({ quick }) {
  if (spawnSync('redis-server', ['--version']).status !== 0 && !process.env.CI) {
    // The README's commands need no Redis; under CI, .ci/run installs it and the scenario runs.
    return { line: 'shared-key: skipped, no redis-server on PATH', figures: { skipped: 'no redis-server on PATH' } };
  }
  const perProcess = quick ? 4 : 40;
  const tasks = perProcess * PROCESSES;
  const redis = await startRedis();
  let shared;
  try {
    shared = await side(perProcess, redis.url);
  } finally {
    await redis.stop();
  }
  const alone = await side(perProcess, undefined);
  const bound = lowerBoundMs(tasks);
  const figures = {
    tasks,
    processes: PROCESSES,
    lower_bound_ms: bound,
    redis: { ...shared, makespan_over_bound: ratio(shared.makespan_ms, bound) },
    without_redis: { ...alone, makespan_over_bound: ratio(alone.makespan_ms, bound) },
  };
  const describe = (s) => {
    const over = fixed(ratio(s.makespan_ms, bound));
    return `${seconds(s.makespan_ms)} (×${over}), ${fixed(s.requests_per_task)} requests/task, ${s.rate_limited} 429s`;
  };
  const head = `shared-key: ${PROCESSES} processes × ${perProcess} tasks, bound ${seconds(bound)}`;
  return {
    line: `${head} | with Redis ${describe(shared)} | without ${describe(alone)}`,
    figures,
  };
}
