import { describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../src/gateway/client.js';
import { httpFailure, type GatewayFailure } from '../../src/gateway/failures.js';
import type { TaskResult } from '../../src/gateway/types.js';
import { err, ok, type Result } from '../../src/result.js';
import {
  byIdSchedule,
  type LearnedReads,
  modelTaskSchedule,
  type PollSchedule,
  waitForTask,
} from '../../src/scheduler/poller.js';
import { GatewayPlaces } from '../../src/scheduler/gateway-places.js';
import { ManualClock } from '../support/manual-clock.js';

const task = (state: 'running' | 'succeeded', taskId = 'task_1'): TaskResult => ({
  taskId,
  modelId: 'vendor-a/vendor-a-v3-t2i',
  status: state === 'running' ? 'processing' : 'success',
  state,
  resources: [],
  metadata: {},
});

/**
 * A client whose only task ends at `endsAt` ms after the test starts, `pending` (in the gateway's
 * queue) before `startsAt`; it records when it was read.
 */
function fakeClient(
  clock: ManualClock,
  endsAt: number,
  failAt?: { read: number; failure: GatewayFailure },
  startsAt = 0,
) {
  const start = clock.now();
  const reads: number[] = [];
  const client = {
    async task(taskId: string): Promise<Result<TaskResult, GatewayFailure>> {
      const elapsed = clock.now() - start;
      reads.push(elapsed);
      if (failAt && reads.length === failAt.read) return err(failAt.failure);
      const read = task(elapsed >= endsAt ? 'succeeded' : 'running', taskId);
      return ok(elapsed < startsAt ? { ...read, status: 'pending' } : read);
    },
  } as unknown as GatewayClient;
  return { client, reads };
}

/**
 * A task of a model learned to take 30 s (first read at 33 s, then every 6 s), ending at `endsAt`,
 * with spare reads at `spareAt` (ms after its submission) taken when `hasSpareRoom` (given the ms
 * elapsed) allows, and none without it (no budget to judge, as a worker's poll); `expected` collects
 * the reads told to the budget. Its reads and the timers due at its start, as ms elapsed.
 */
async function spareReadsOfLearnedTask(options: {
  endsAt: number;
  spareAt: number[];
  hasSpareRoom?: (elapsed: number) => boolean;
  expected?: number[];
}) {
  const clock = new ManualClock();
  const start = clock.now();
  const { client, reads } = fakeClient(clock, options.endsAt);
  const schedule = modelTaskSchedule(start, {
    expectedMs: 30_000,
    firstPollMs: 33_000,
    submittedAt: start,
    maxIntervalMs: 60_000,
    webhook: false,
  });
  const { hasSpareRoom, expected } = options;
  const waiting = waitForTask(client, clock, 'task_1', {
    ...schedule,
    spareAt: options.spareAt.map((ms) => start + ms),
    ...(hasSpareRoom ? { hasSpareRoom: () => hasSpareRoom(clock.now() - start) } : {}),
    expectedReads: { expect: (at) => expected?.push(at - start), end: () => {} },
  });
  await clock.advance(0);
  const duesAtStart = clock.dues().map((due) => due - start);
  await clock.advance(100_000);
  return { reads, duesAtStart, waited: await waiting };
}

describe('waitForTask on the model schedule', () => {
  it('before anything is learned, the probe reads at 1 s, 2 s, 3.5 s, … up to a quarter of the guess, evenly until the guess, then backs off by half, capped', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 80_000);
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 40_000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 20_000,
      webhook: false,
      probe: true,
    });
    const waiting = waitForTask(client, clock, 'task_1', schedule);
    await clock.advance(200_000);
    const waited = await waiting;
    expect(waited.ok && waited.value).toMatchObject({ result: { state: 'succeeded' }, polls: 12 });
    const seconds = reads.map((ms) => ms / 1000);
    expect(seconds).toEqual([1, 2, 3.5, 5.75, 9.125, 14.188, 21.783, 31.783, 41.783, 51.783, 66.783, 86.783]);
  });

  it('a probe finds a task far shorter than the guess within a second or so', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 3000);
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 40_000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 15_000,
      webhook: false,
      probe: true,
    });
    const waiting = waitForTask(client, clock, 'task_1', schedule);
    await clock.advance(10_000);
    expect((await waiting).ok).toBe(true);
    expect(reads).toEqual([1000, 2000, 3500]);
  });

  it('a task waiting for the probe reads nothing until the time is learned, then when a typical task is done', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 15_000);
    let learn!: (reads: LearnedReads) => void;
    const learned = new Promise<LearnedReads>((resolve) => (learn = resolve));
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 40_000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 15_000,
      webhook: false,
    });
    const waiting = waitForTask(client, clock, 'task_1', { ...schedule, learned });
    await clock.advance(12_000);
    expect(reads).toEqual([]);
    learn({ firstAt: clock.now() + 2000, intervalMs: 2000 });
    await clock.advance(10_000);
    const waited = await waiting;
    expect(waited.ok && waited.value.polls).toBe(2);
    expect(reads).toEqual([14_000, 16_000]);
  });

  it('a task waiting for a probe that learns nothing reads first at the guess, then every quarter of it growing by half', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 60_000);
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 40_000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 60_000,
      webhook: false,
    });
    const waiting = waitForTask(client, clock, 'task_1', { ...schedule, learned: new Promise(() => {}) });
    await clock.advance(100_000);
    expect((await waiting).ok).toBe(true);
    expect(reads).toEqual([40_000, 50_000, 65_000]);
  });

  it('once learned: the first read when a typical task is done, then back-off from a fifth of the expected time', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 45_000);
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 40_000,
      firstPollMs: 30_000,
      submittedAt: clock.now(),
      maxIntervalMs: 60_000,
      webhook: false,
    });
    const waiting = waitForTask(client, clock, 'task_1', schedule);
    await clock.advance(200_000);
    const waited = await waiting;
    expect(waited.ok && waited.value.polls).toBe(3);
    expect(reads).toEqual([30_000, 38_000, 50_000]);
  });

  it("a read that finds the task still pending (in the gateway's queue) waits its least time before the next, spare reads too", async () => {
    // Learned as 30 s (first read at 33 s, then 6 s growing by half); in the queue until 40 s, it ends at 70 s.
    const readsOf = async (pendingMs?: number) => {
      const clock = new ManualClock();
      const { client, reads } = fakeClient(clock, 70_000, undefined, 40_000);
      const schedule = modelTaskSchedule(clock.now(), {
        expectedMs: 30_000,
        firstPollMs: 33_000,
        submittedAt: clock.now(),
        maxIntervalMs: 60_000,
        webhook: false,
      });
      const waiting = waitForTask(client, clock, 'task_1', {
        ...schedule,
        spareAt: [clock.now() + 35_000],
        hasSpareRoom: () => true,
        ...(pendingMs ? { pendingMs } : {}),
      });
      await clock.advance(200_000);
      expect((await waiting).ok).toBe(true);
      return reads;
    };
    // Found pending at 33 s, it cannot end before 60 s: no read at 35 s or 39 s.
    expect(await readsOf(27_000)).toEqual([33_000, 60_000, 69_000, 82_500]);
    expect(await readsOf()).toEqual([33_000, 35_000, 39_000, 48_000, 61_500, 81_750]);
  });

  it('a task queued at its submission, once a read finds it running, is read as a task that started between its last pending read and that one', async () => {
    // In the queue until 10 s, it runs 30 s to 40 s; read at 8 s (pending), then 6 s later (running).
    const readsOf = async (fromStart?: PollSchedule['fromStart']) => {
      const clock = new ManualClock();
      const { client, reads } = fakeClient(clock, 40_000, undefined, 10_000);
      const schedule = { firstDelayMs: 8_000, intervalMs: 6_000, maxIntervalMs: 60_000, growFrom: 0 };
      const told: Array<[number, number]> = [];
      const start = clock.now();
      const waiting = waitForTask(client, clock, 'task_1', {
        ...schedule,
        ...(fromStart
          ? {
              fromStart: (waitedUntil: number, runningAt: number) => {
                told.push([waitedUntil - start, runningAt - start]);
                return fromStart(waitedUntil, runningAt);
              },
            }
          : {}),
      });
      await clock.advance(200_000);
      expect((await waiting).ok).toBe(true);
      return { reads, told };
    };
    // Started at the last pending read (8 s) at the earliest: read 30 s and 25 ms after it.
    const queued = await readsOf((waitedUntil) => ({ readAt: waitedUntil + 30_025 }));
    expect(queued.told).toEqual([[8_000, 14_000]]);
    expect(queued.reads).toEqual([8_000, 14_000, 38_025, 47_025]);
    // A start that would put the read in the past leaves the schedule as it was.
    expect((await readsOf((waitedUntil) => ({ readAt: waitedUntil - 1 }))).reads).toEqual([
      8_000, 14_000, 23_000, 36_500, 56_750,
    ]);
    expect((await readsOf()).reads).toEqual([8_000, 14_000, 23_000, 36_500, 56_750]);
  });

  it("a task waiting in the gateway's queue is read from the start the replay of the places foresees, and moves with it", async () => {
    // One place, held by a task expected to take 10 s; the queued task takes 5 s once started.
    const readsOf = async (aheadEndsAt: number | undefined, queuedUntil: number) => {
      const clock = new ManualClock();
      const start = clock.now();
      const places = new GatewayPlaces(1, () => clock.now());
      const ahead = places.add(start, false, 10_000);
      const place = places.add(start, true, 5_000);
      const { client, reads } = fakeClient(clock, queuedUntil + 5_000, undefined, queuedUntil);
      const waiting = waitForTask(client, clock, 'task_1', {
        firstDelayMs: 5_025,
        intervalMs: 1_000,
        maxIntervalMs: 60_000,
        growFrom: 0,
        queued: { start: place, readsFrom: (startedAt) => ({ readAt: startedAt + 5_025 }) },
      });
      // The task ahead is seen, at 7 s, to have ended at `aheadEndsAt`.
      await clock.advance(7_000);
      if (aheadEndsAt !== undefined) ahead.ended(start + aheadEndsAt);
      await clock.advance(100_000);
      expect((await waiting).ok).toBe(true);
      return reads;
    };
    // Ended at 6 s: the queued task started then, and is read once, just after its end at 11 s.
    expect(await readsOf(6_000, 6_000)).toEqual([11_025]);
    // Never seen to end: the queued task starts no earlier than the 10 s expected of the one ahead.
    expect(await readsOf(undefined, 6_000)).toEqual([15_025]);
    // Still pending when read (another user's task was ahead): read again from no earlier than then;
    // found running, on the schedule's interval, grown by half after the pending read (1.5 s).
    expect(await readsOf(6_000, 12_000)).toEqual([11_025, 16_050, 17_550]);
  });

  it('a queued task the replay keeps finding pending is read less and less often', async () => {
    // A 1 s model, foreseen to start at once; another user's tasks keep it waiting until 10 s.
    const clock = new ManualClock();
    const place = new GatewayPlaces(1, () => clock.now()).add(clock.now(), true, 1_000);
    const { client, reads } = fakeClient(clock, 11_000, undefined, 10_000);
    const waiting = waitForTask(client, clock, 'task_1', {
      firstDelayMs: 1_025,
      intervalMs: 1_000,
      maxIntervalMs: 60_000,
      growFrom: 0,
      queued: { start: place, readsFrom: (startedAt) => ({ readAt: startedAt + 1_025 }) },
    });
    await clock.advance(100_000);
    expect((await waiting).ok).toBe(true);
    // Each wait after a pending read half as long again as the one before, from the schedule's interval.
    expect(reads).toEqual([1_025, 2_050, 3_550, 5_800, 9_175, 14_238]);
  });

  it('spare reads before the first come only while the budget has room to spare, and leave the schedule as it was', async () => {
    // No room at 27 s; room at 29 s and 31 s (both find it running); 33 s is the schedule's own read.
    const roomAt = new Set([29_000, 31_000]);
    const expected: number[] = [];
    const { reads, waited } = await spareReadsOfLearnedTask({
      endsAt: 32_000,
      spareAt: [27_000, 29_000, 31_000, 34_000],
      hasSpareRoom: (elapsed) => roomAt.has(elapsed),
      expected,
    });
    expect(reads).toEqual([29_000, 31_000, 33_000]);
    expect(waited.ok && waited.value.polls).toBe(3);
    // The budget is told of the schedule's read, not of the spare ones.
    expect(new Set(expected)).toEqual(new Set([33_000]));
  });

  it('spare reads between the reads of the schedule see a task that runs long sooner', async () => {
    // The schedule reads at 33 s, then 6 s later; the spare reads at 35 s and 37 s come between.
    const { reads } = await spareReadsOfLearnedTask({
      endsAt: 36_000,
      spareAt: [35_000, 37_000],
      hasSpareRoom: () => true,
    });
    expect(reads).toEqual([33_000, 35_000, 37_000]);
  });

  it('a spare read that finds the task ended ends the wait at once', async () => {
    const { reads, waited } = await spareReadsOfLearnedTask({
      endsAt: 26_000,
      spareAt: [27_000, 29_000],
      hasSpareRoom: () => true,
    });
    expect(reads).toEqual([27_000]);
    expect(waited.ok && waited.value.result.state).toBe('succeeded');
  });

  it('without a budget to judge the room (a worker), spare read times are left alone: no read, no wake-up', async () => {
    const { reads, duesAtStart } = await spareReadsOfLearnedTask({ endsAt: 32_000, spareAt: [27_000, 29_000] });
    // The one timer is the schedule's own first read.
    expect(duesAtStart).toEqual([33_000]);
    expect(reads).toEqual([33_000]);
  });

  it('a task from before a resume (submitted long ago) is read almost at once', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 0);
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 40_000,
      firstPollMs: 30_000,
      submittedAt: 0,
      maxIntervalMs: 60_000,
      webhook: false,
    });
    const waiting = waitForTask(client, clock, 'task_1', schedule);
    await clock.advance(1000);
    expect((await waiting).ok).toBe(true);
    expect(reads).toEqual([200]);
  });

  it('a webhook delivery that comes before the first read ends the wait with no read and no timer left', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 5000);
    let deliver!: (result: TaskResult) => void;
    const delivered = new Promise<TaskResult>((resolve) => (deliver = resolve));
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 10_000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 5000,
      webhook: true,
    });
    const waiting = waitForTask(client, clock, 'task_1', { ...schedule, delivered });
    await clock.advance(5000);
    deliver(task('succeeded'));
    const waited = await waiting;
    expect(waited.ok && waited.value).toMatchObject({ result: { state: 'succeeded' }, polls: 0 });
    expect(reads).toEqual([]);
    expect(clock.pending()).toBe(0);
  });

  it('with a webhook whose delivery is lost, reads at three times the expected time, then every poll interval', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 45_000);
    const delivered = new Promise<TaskResult>(() => {});
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 10_000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 5000,
      webhook: true,
    });
    const waiting = waitForTask(client, clock, 'task_1', { ...schedule, delivered });
    await clock.advance(100_000);
    expect((await waiting).ok).toBe(true);
    expect(reads).toEqual([30_000, 35_000, 40_000, 45_000]);
  });

  it('a delivery racing a read: whichever comes first ends the wait, and the other does no harm', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 0);
    let deliver!: (result: TaskResult) => void;
    const delivered = new Promise<TaskResult>((resolve) => (deliver = resolve));
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 1000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 5000,
      webhook: true,
    });
    const waiting = waitForTask(client, clock, 'task_1', { ...schedule, delivered });
    await clock.advance(3000);
    deliver(task('succeeded'));
    const waited = await waiting;
    expect(waited.ok && waited.value).toMatchObject({ result: { state: 'succeeded' }, polls: 1 });
    expect(reads).toEqual([3000]);
    expect(clock.pending()).toBe(0);
  });

  it('a failing read ends the wait with that failure as a value', async () => {
    const clock = new ManualClock();
    const failure = httpFailure(404, 'Not found: task task_1 does not exist', undefined);
    const { client, reads } = fakeClient(clock, 60_000, { read: 2, failure });
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 8000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 60_000,
      webhook: false,
    });
    const waiting = waitForTask(client, clock, 'task_1', schedule);
    await clock.advance(100_000);
    expect(await waiting).toEqual({ ok: false, error: failure });
    expect(reads).toHaveLength(2);
  });

  it('a stop while waiting is an aborted failure, not a throw', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 60_000);
    const controller = new AbortController();
    const schedule = modelTaskSchedule(clock.now(), {
      expectedMs: 8000,
      firstPollMs: undefined,
      submittedAt: clock.now(),
      maxIntervalMs: 60_000,
      webhook: false,
    });
    const waiting = waitForTask(client, clock, 'task_1', { ...schedule, signal: controller.signal });
    await clock.advance(1000);
    controller.abort();
    expect(await waiting).toMatchObject({ ok: false, error: { reason: 'aborted' } });
    expect(reads).toEqual([]);
  });
});

describe('waitForTask on the task-by-id schedule (pipeline task wait)', () => {
  it('reads at once, then after 2 s growing by half up to 15 s', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 40_000);
    const waiting = waitForTask(client, clock, 'task_1', byIdSchedule());
    await clock.advance(100_000);
    expect((await waiting).ok).toBe(true);
    expect(reads).toEqual([0, 2000, 5000, 9500, 16_250, 26_375, 41_375]);
  });

  it('gives up after its timeout with a timeout failure that says how the task stands', async () => {
    const clock = new ManualClock();
    const { client, reads } = fakeClient(clock, 60_000);
    const waiting = waitForTask(client, clock, 'task_1', { ...byIdSchedule(), timeoutMs: 10_000 });
    await clock.advance(100_000);
    expect(await waiting).toEqual({
      ok: false,
      error: {
        reason: 'timeout',
        phase: 'body',
        message: 'task task_1 is still processing after 10.0s',
        retryable: false,
        outcomeUnknown: false,
      },
    });
    // The last wait is cut short to end at the timeout.
    expect(reads).toEqual([0, 2000, 5000, 9500, 10_000]);
  });
});
