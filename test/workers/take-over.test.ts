/**
 * The take-over rules of a model job, in one process against a real Redis and the local gateway:
 * a worker that finds a job's submission recorded polls its task or calls it unknown, and never
 * submits it again; a queued job is withdrawn or recalled without being sent.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { HttpGatewayClient } from '../../src/gateway/client.js';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { Coordinator } from '../../src/workers/coordinator.js';
import { submissionKey } from '../../src/workers/jobs.js';
import { claim, markSending, openRecord, recordAnswer, retire } from '../../src/workers/submission-record.js';
import { type RunningWorker, startWorker } from '../../src/workers/worker.js';
import { endpointsOf } from '../support/http.js';
import { modelJob } from '../support/model-job.js';
import { type RedisServer, redisTestsRun, startRedis } from '../support/redis-server.js';

const SLUG = 'vendor-a/vendor-a-v3-t2i';
const QUEUE = 'take-over';

let redis: RedisServer;
let gateway: LocalGateway;
let client: HttpGatewayClient;
let records: Redis;
let coordinator: Coordinator | undefined;
let worker: RunningWorker | undefined;
const said: string[] = [];

beforeAll(async () => {
  if (!redisTestsRun) return;
  redis = await startRedis();
  gateway = await startLocalGateway({ latencyScale: 0.02, latencyJitter: 0, seed: 9 });
  client = new HttpGatewayClient({ endpoints: endpointsOf(gateway), apiKey: gateway.apiKey });
  records = new Redis(redis.url);
});
afterAll(async () => {
  if (!redisTestsRun) return;
  records.disconnect();
  await client.close();
  await gateway.close();
  await redis.stop();
});
afterEach(async () => {
  await worker?.close();
  await coordinator?.close();
  worker = undefined;
  coordinator = undefined;
  said.length = 0;
});

const submitted = () => gateway.stats().tasks.submitted[SLUG] ?? 0;

async function open(options: { gateway?: string } = {}): Promise<Coordinator> {
  coordinator = await Coordinator.open({
    redisUrl: redis.url,
    shownUrl: redis.url,
    queue: QUEUE,
    runId: 'run-1',
    gateway: options.gateway ?? gateway.baseUrl,
    passEnv: [],
    note: (line) => said.push(line),
  });
  return coordinator;
}

async function work(): Promise<void> {
  worker = await startWorker({
    redisUrl: redis.url,
    shownUrl: redis.url,
    queue: QUEUE,
    concurrency: 2,
    takeoverMs: 15_000,
    client,
    clock: systemClock,
    gateway: gateway.baseUrl,
    env: {},
    say: (line) => said.push(line),
  });
}

describe.skipIf(!redisTestsRun)('a model job on a worker', () => {
  it('is submitted once, its task id recorded in Redis and told to the coordinator before its end', async () => {
    const before = submitted();
    const coordinator = await open();
    await work();
    const told: string[] = [];
    const end = await coordinator.model(modelJob(), (taskId) => told.push(taskId), new AbortController().signal);
    expect(end.kind).toBe('ended');
    if (end.kind !== 'ended') return;
    expect(end.result.state).toBe('succeeded');
    expect(submitted()).toBe(before + 1);
    expect(told).toContain(end.taskId);
  });

  it('taken over with its task id recorded: the task is polled, nothing submitted', async () => {
    const task = await client.submit(SLUG, { prompt: 'an owl', aspect_ratio: '1:1' });
    if (!task.ok) throw new Error(task.error.message);
    const request = randomUUID();
    await records.hset(submissionKey(QUEUE, request), { state: 'submitted', task_id: task.value.taskId });
    const before = submitted();
    const coordinator = await open();
    await work();
    const end = await coordinator.model(modelJob(request), () => {}, new AbortController().signal);
    expect(end).toMatchObject({ kind: 'ended', taskId: task.value.taskId });
    expect(submitted()).toBe(before);
    expect(said.join('\n')).toContain(
      `taking over image[0] (row 1 of run run-1) of a lost worker: polling its task ${task.value.taskId}, not submitting again`,
    );
  });

  it('taken over while its POST was on the wire (no task id): outcome unknown, nothing submitted', async () => {
    const request = randomUUID();
    await records.hset(submissionKey(QUEUE, request), { state: 'submitting' });
    const before = submitted();
    const coordinator = await open();
    await work();
    const end = await coordinator.model(modelJob(request), () => {}, new AbortController().signal);
    expect(end.kind).toBe('unknown');
    if (end.kind === 'unknown') expect(end.failure.outcomeUnknown).toBe(true);
    expect(submitted()).toBe(before);
  });

  it('an LLM call taken over while it was on the wire is an outcome unknown, not sent again', async () => {
    const coordinator = await open();
    const item = { row: 0, step: 'brief', index: 0, label: 'brief' };
    const answer = coordinator.action(
      item,
      'llm',
      { model: 'vendor-x/writer-1', prompt: 'a brief' },
      new AbortController().signal,
    );
    // The job waits in the queue: record it as a worker, lost since, left it (its call on the wire).
    let waiting: string[] = [];
    while (waiting.length === 0) waiting = await records.lrange(`bull:${QUEUE}:wait`, 0, -1);
    await records.hset(submissionKey(QUEUE, waiting[0]!), { state: 'submitting', owner: 'lost-host-1-abc/1/ffff' });
    const requestsBefore = gateway.stats().requests.total;
    await work();
    const end = await answer;
    expect(end.ok).toBe(false);
    if (!end.ok) {
      expect(end.error.outcomeUnknown).toBe(true);
      expect(end.error.message).toContain('the worker running brief was lost during its call');
    }
    expect(gateway.stats().requests.total).toBe(requestsBefore);
  });

  it('of a run on another gateway is passed on by the worker, nothing submitted, and the run says why', async () => {
    const before = submitted();
    const coordinator = await open({ gateway: 'https://other.example/api/v1' });
    await work();
    const stop = new AbortController();
    const waiting = coordinator.model(modelJob(), () => {}, stop.signal);
    const reason =
      /uses the gateway at .*, the run at https:\/\/other\.example\/api\/v1: start workers with the run's PIPELINE_BASE_URL; its jobs wait for another worker$/;
    while (!said.some((line) => reason.test(line))) await new Promise((resolve) => setTimeout(resolve, 20));
    // Waiting for a worker on its gateway, not failed: stopped, it is withdrawn, never sent.
    stop.abort();
    expect((await waiting).kind).toBe('withdrawn');
    expect(submitted()).toBe(before);
  });

  it('recalled while a live worker is sending it: waits for its answer, not called unknown', async () => {
    // The worker's POST takes 1.5 s to be answered: the recall comes while it is on the wire.
    gateway.injectFault({ kind: 'delay', route: 'POST /api/v1/{provider}/{model_id}', delay_ms: 1500, times: 1 });
    const before = submitted();
    const running = await open();
    await work();
    const request = randomUUID();
    const sent = running.model(modelJob(request), () => {}, new AbortController().signal);
    while ((await records.hget(submissionKey(QUEUE, request), 'state')) !== 'submitting')
      await new Promise((resolve) => setTimeout(resolve, 10));
    // A resume's coordinator, as after the first was killed while its workers went on.
    const resuming = await Coordinator.open({
      redisUrl: redis.url,
      shownUrl: redis.url,
      queue: QUEUE,
      runId: 'run-1',
      gateway: gateway.baseUrl,
      passEnv: [],
      note: (line) => said.push(line),
    });
    try {
      const recalled = await resuming.recall(request);
      expect(recalled).toEqual({ kind: 'submitted', taskId: expect.stringMatching(/^task_/) });
      expect(submitted()).toBe(before + 1);
    } finally {
      await resuming.close();
    }
    await sent;
  });

  it('no worker holds is withdrawn when the run stops, and recalled as unsent on resume', async () => {
    const before = submitted();
    const coordinator = await open();
    const stop = new AbortController();
    const waiting = coordinator.model(modelJob(), () => {}, stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop.abort();
    expect(await waiting).toEqual({ kind: 'withdrawn' });
    // A job left queued by a coordinator killed outright: the resume takes it off the queue first.
    const request = randomUUID();
    void coordinator.model(modelJob(request), () => {}, new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await coordinator.recall(request)).toEqual({ kind: 'unsent' });
    await work();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(submitted()).toBe(before);
  });
});

describe.skipIf(!redisTestsRun)('a submission record', () => {
  const key = () => submissionKey(QUEUE, randomUUID());

  it('lets only its latest owner send: a worker that took the job over, not the one it took it from', async () => {
    const at = key();
    await openRecord(records, at);
    expect(await claim(records, at, 'lost-worker')).toEqual({ state: 'mine' });
    expect(await claim(records, at, 'new-worker')).toEqual({ state: 'mine' });
    expect(await markSending(records, at, 'lost-worker')).toBe(false);
    expect(await markSending(records, at, 'new-worker')).toBe(true);
    // Sent: a third worker finds it on the wire and must not send.
    expect(await claim(records, at, 'third-worker')).toEqual({ state: 'submitting' });
    await recordAnswer(records, at, { state: 'submitted', task_id: 'task_1' });
    expect(await claim(records, at, 'third-worker')).toEqual({ state: 'submitted', taskId: 'task_1' });
  });

  it('once retired with nothing sent, lets no owner send, even one that claimed it before', async () => {
    const at = key();
    await openRecord(records, at);
    expect(await claim(records, at, 'slow-worker')).toEqual({ state: 'mine' });
    expect(await retire(records, at)).toEqual({ state: 'withdrawn' });
    expect(await markSending(records, at, 'slow-worker')).toBe(false);
    expect(await claim(records, at, 'other-worker')).toEqual({ state: 'withdrawn' });
    // A record no one claimed is retired too: a job still queued can never be sent afterwards.
    const fresh = key();
    await openRecord(records, fresh);
    expect(await retire(records, fresh)).toEqual({ state: 'withdrawn' });
    expect(await claim(records, fresh, 'late-worker')).toEqual({ state: 'withdrawn' });
  });

  it('is not retired once its POST left: the coordinator learns it was sent', async () => {
    const at = key();
    await openRecord(records, at);
    await claim(records, at, 'worker');
    await markSending(records, at, 'worker');
    expect(await retire(records, at)).toEqual({ state: 'submitting' });
    await recordAnswer(records, at, { state: 'submitted', task_id: 'task_2' });
    expect(await retire(records, at)).toEqual({ state: 'submitted', taskId: 'task_2' });
  });

  it('calls a record Redis lost unknown: neither a worker nor a resume may send it again', async () => {
    // The coordinator opens every record before it queues the job: none at all means Redis lost it
    // (a restart without its data), after which nobody can tell whether the POST left.
    const lost = key();
    const unknown = {
      state: 'unknown',
      message:
        'its submission record is gone from Redis (restarted without its data?), so whether it was sent is not known',
    };
    expect(await claim(records, lost, 'worker')).toEqual(unknown);
    expect(await retire(records, lost)).toEqual(unknown);
    expect(await markSending(records, lost, 'worker')).toBe(false);
    // Opening again (a resume's) keeps a record that exists as it stands.
    const sent = key();
    await openRecord(records, sent);
    await claim(records, sent, 'worker');
    await markSending(records, sent, 'worker');
    await openRecord(records, sent);
    expect(await retire(records, sent)).toEqual({ state: 'submitting' });
  });
});

describe.skipIf(!redisTestsRun)('a Redis that loses its data mid-run (restarted without persistence)', () => {
  it('ends the jobs it lost instead of waiting for them, and no submission is sent twice', async () => {
    // Tasks that take seconds: they are in flight when Redis forgets everything.
    const slow = await startLocalGateway({ latencyScale: 1, latencyJitter: 0, seed: 10 });
    const slowClient = new HttpGatewayClient({ endpoints: endpointsOf(slow), apiKey: slow.apiKey });
    try {
      coordinator = await Coordinator.open({
        redisUrl: redis.url,
        shownUrl: redis.url,
        queue: 'forgetful',
        runId: 'run-lost',
        gateway: slow.baseUrl,
        passEnv: [],
        note: (line) => said.push(line),
        sweepMs: 100,
      });
      worker = await startWorker({
        redisUrl: redis.url,
        shownUrl: redis.url,
        queue: 'forgetful',
        concurrency: 4,
        takeoverMs: 15_000,
        client: slowClient,
        clock: systemClock,
        gateway: slow.baseUrl,
        env: {},
        say: (line) => said.push(line),
      });
      const jobs = Array.from({ length: 6 }, (_, index) => ({
        ...modelJob(),
        index,
        label: `image[${index}]`,
        expectedMs: 3000,
      }));
      const ends = Promise.all(jobs.map((j) => coordinator!.model(j, () => {}, new AbortController().signal)));
      while ((slow.stats().tasks.submitted[SLUG] ?? 0) < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      await records.flushall();
      const settled = await ends;
      // Lost with their records: whether each was sent cannot be known, so none is answered as unsent
      // (a task its worker told of, or wrote again after the loss, is read by the run: `orphaned`).
      for (const end of settled) expect(['ended', 'unknown', 'unread', 'orphaned']).toContain(end.kind);
      expect(settled.some((end) => end.kind === 'unknown')).toBe(true);
      // A resume recalls each: none comes back as never sent, so none is submitted again.
      for (const j of jobs) expect(await coordinator.recall(j.request)).not.toEqual({ kind: 'unsent' });
      const sent = slow.stats().tasks.submitted[SLUG] ?? 0;
      expect(sent).toBeLessThanOrEqual(jobs.length);
    } finally {
      await worker?.close();
      worker = undefined;
      await slowClient.close();
      await slow.close();
    }
  });
});
