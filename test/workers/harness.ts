/**
 * What the workers tests share: a real Redis and a folder per test file, worker processes started
 * and stopped, and waits for the moments the tests act at.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { LocalGateway } from '../../src/local-gateway/index.js';
import { type RedisServer, redisTestsRun, startRedis } from '../support/redis-server.js';
export const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const SLUG = 'vendor-a/vendor-a-v3-t2i';
export const PASSWORD = 'workers-pass-51c2';

export let dir: string;
export let redis: RedisServer;

/** A folder and a real redis-server for the calling test file, from its start to its end. */
export function useFolderAndRedis(): void {
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
}

export function batchRecipe(count: number, tag: string): string {
  const prompts = Array.from({ length: count }, (_, i) => `"${tag} shot ${i}"`).join(', ');
  const withLine = '    with: { prompt: "${{ item }}", aspect_ratio: "1:1" }\n';
  return `version: 1\nname: workers\nsteps:\n  image:\n    uses: ${SLUG}\n    for_each: [${prompts}]\n${withLine}`;
}

export const envFor = (gateway: LocalGateway, home: string, extra: Record<string, string> = {}) => ({
  PIPELINE_HOME: join(dir, home),
  PIPELINE_BASE_URL: gateway.baseUrl,
  PIPELINE_API_KEY: gateway.apiKey,
  CI: 'true',
  ...extra,
});

export interface WorkerProcess {
  process: ResultPromise;
  stderr(): string;
}

/** A `pipeline worker` process, once it says it takes jobs. Wrapped: a bare execa promise would be awaited. */
export async function startWorker(
  gateway: LocalGateway,
  home: string,
  queue: string,
  url = redis.url,
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess> {
  // A lost worker's jobs are taken over after 5 s rather than 15: the kill tests wait for it.
  const flags = ['--concurrency', '4', '--takeover-after', '5'];
  const child = execa('node', [cli, 'worker', '--redis', url, '--queue', queue, ...flags], {
    reject: false,
    env: envFor(gateway, home, extraEnv),
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

export async function waitFor(condition: () => boolean, describe: () => string, ms = 30_000): Promise<void> {
  for (const started = Date.now(); !condition(); ) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting; output so far:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Freezes the worker `pid` (SIGSTOP) at a moment when no submission of the queue is on the wire
 * (each record is `submitted`, none `submitting`), for a kill that tests the take-over: frozen, it
 * cannot start a POST between the look and the kill. A kill while a POST is on the wire leaves that
 * one submission's outcome unknown, as in one process: the rule, not what is tested. With
 * `polling`, that worker also polls a task it sent (its record submitted, its job active), so that
 * killing it leaves a task for another worker to take over.
 */
export async function freezeAtQuietMoment(queue: string, pid: number, options: { polling?: boolean } = {}) {
  const client = new Redis(redis.url);
  try {
    for (;;) {
      process.kill(pid, 'SIGSTOP');
      if (await quiet(client, queue, options.polling ? pid : undefined)) return;
      process.kill(pid, 'SIGCONT');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    client.disconnect();
  }
}

async function quiet(client: Redis, queue: string, pollingWorker: number | undefined): Promise<boolean> {
  const keys = await client.keys(`pipeline:workers:${queue}:submission:*`);
  const records = await Promise.all(
    keys.map(
      async (key): Promise<Record<string, string> & { key: string }> => ({ ...(await client.hgetall(key)), key }),
    ),
  );
  if (records.some((record) => record.state === 'submitting')) return false;
  if (pollingWorker === undefined) return true;
  const active = new Set(await client.lrange(`bull:${queue}:active`, 0, -1));
  return records.some(
    (record) =>
      record.state === 'submitted' &&
      record.owner?.includes(`-${pollingWorker}-`) &&
      active.has(record.key.slice(record.key.lastIndexOf(':') + 1)),
  );
}

export async function stopAll(workers: WorkerProcess[]): Promise<void> {
  for (const worker of workers) if (worker.process.exitCode === null) worker.process.kill('SIGTERM');
  await Promise.all(workers.map((worker) => worker.process));
}

/** Every value stored in Redis, as text: what a secret must never be part of. */
export async function everythingIn(url: string): Promise<string> {
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

export const gatewayOptions = (seed: number) => ({
  rpm: 120,
  windowSeconds: 6,
  maxConcurrent: 12,
  latencyScale: 0.25,
  latencyJitter: 0,
  seed,
});
