import { describe, expect, it } from 'vitest';
import { DurationModel, processingTime, queueWait } from '../../src/engine/durations.js';

const SLUG = 'vendor-b/vendor-b-2.0-mini-v2v';
const TYPE = 'video-to-video';
const input = { duration: 5 };
const task = (submittedAt: number) => ({ now: submittedAt, submittedAt, maxIntervalMs: 15_000, webhook: false });

describe('DurationModel.pollSchedule', () => {
  it('with nothing learned, one task probes the model and the others wait for what it learns', async () => {
    const durations = new DurationModel();
    const probe = durations.pollSchedule(SLUG, TYPE, input, task(0));
    const follower = durations.pollSchedule(SLUG, TYPE, input, task(500));
    expect(probe.schedule).toMatchObject({ firstDelayMs: 1000, rampToMs: 10_000 });
    expect(probe.schedule.learned).toBeUndefined();
    // The follower's first read is at the guess (40 s for 5 s of video), unless the probe learns first.
    expect(follower.schedule).toMatchObject({ firstDelayMs: 40_000 });
    expect(follower.schedule.learned).toBeDefined();

    durations.observe(SLUG, TYPE, input, 12_000);
    probe.done();
    // Read when a task submitted with the follower is typically done: 0.5 s + 12 s + 25 ms.
    await expect(follower.schedule.learned).resolves.toEqual({ firstAt: 12_525, intervalMs: 2400 });
    follower.done();
  });

  it('a probe that ends without teaching anything hands the probing on to the next task', () => {
    const durations = new DurationModel();
    const first = durations.pollSchedule(SLUG, TYPE, input, task(0));
    expect(durations.pollSchedule(SLUG, TYPE, input, task(0)).schedule.rampToMs).toBeUndefined();
    first.done();
    expect(durations.pollSchedule(SLUG, TYPE, input, task(0)).schedule.rampToMs).toBe(10_000);
  });

  it('once learned (here, or by an earlier run), every task is read on the learned time and nothing probes', () => {
    const durations = new DurationModel({ [SLUG]: { mean: 20_000, variance: 0, samples: 3 } });
    const { schedule } = durations.pollSchedule(SLUG, TYPE, input, task(0));
    expect(schedule).toMatchObject({ firstDelayMs: 20_025 });
    expect(schedule.rampToMs).toBeUndefined();
    expect(schedule.learned).toBeUndefined();
  });

  it('once learned, a task found pending waits a deviation under the mean per unit of work; nothing is known before', () => {
    const learned = new DurationModel({ [SLUG]: { mean: 20_000, variance: 3000 ** 2, samples: 3 } });
    expect(learned.pollSchedule(SLUG, TYPE, { duration: 10 }, task(0)).schedule.pendingMs).toBe(34_000);
    expect(new DurationModel().pollSchedule(SLUG, TYPE, input, task(0)).schedule.pendingMs).toBeUndefined();
  });

  it("a task the gateway queued is read from the run's mean wait past its submission, and once seen running, from its likely start", () => {
    const durations = new DurationModel({ [SLUG]: { mean: 20_000, variance: 0, samples: 3 } });
    // No wait learned yet (nor ever, from a gateway that reports no processing time): read from its submission.
    const early = durations.pollSchedule(SLUG, TYPE, input, { ...task(0), queued: true }).schedule;
    expect(early).toMatchObject({ firstDelayMs: 20_025 });
    expect(early.fromStart).toBeUndefined();
    durations.observeWait(4_000);
    durations.observeWait(8_000);
    // The mean wait moves by a quarter of each new one: 4 s, then 5 s.
    const { schedule } = durations.pollSchedule(SLUG, TYPE, input, { ...task(0), queued: true });
    expect(schedule).toMatchObject({ firstDelayMs: 25_025 });
    // The start is the expected one where the reads allow it, else as near it as they allow.
    expect(schedule.fromStart?.(3_000, 9_000)).toEqual({ readAt: 25_025 });
    expect(schedule.fromStart?.(7_000, 9_000)).toEqual({ readAt: 27_025 });
    expect(schedule.fromStart?.(1_000, 2_000)).toEqual({ readAt: 22_025 });
    // A task that started at once is read from its submission, whatever others waited.
    const direct = durations.pollSchedule(SLUG, TYPE, input, task(0)).schedule;
    expect(direct).toMatchObject({ firstDelayMs: 20_025 });
    expect(direct.fromStart).toBeUndefined();
  });

  it("a task's running time is the gateway's processing time, else its submit-to-end; its wait, the difference", () => {
    const ended = {
      taskId: 't',
      modelId: 'm',
      status: 'success',
      state: 'succeeded' as const,
      resources: [],
      metadata: {},
    };
    expect(processingTime({ ...ended, durationMs: 9_000, submitTime: 1_000, endTime: 12_000 })).toBe(9_000);
    expect(queueWait({ ...ended, durationMs: 9_000, submitTime: 1_000, endTime: 12_000 })).toBe(2_000);
    // No processing time (or 0): submit-to-end, and no wait known.
    expect(processingTime({ ...ended, durationMs: 0, submitTime: 1_000, endTime: 12_000 })).toBe(11_000);
    expect(queueWait({ ...ended, durationMs: 0, submitTime: 1_000, endTime: 12_000 })).toBeUndefined();
    expect(processingTime(ended)).toBeUndefined();
    expect(queueWait({ ...ended, durationMs: 9_000 })).toBeUndefined();
  });

  it("a worker's job carries the coordinator's figures, which serve until the worker learns its own", () => {
    const durations = new DurationModel();
    const guess = { expectedMs: 30_000, firstPollMs: 31_000 };
    const { schedule } = durations.pollSchedule(SLUG, TYPE, input, { ...task(0), guess });
    expect(schedule).toMatchObject({ firstDelayMs: 31_000, intervalMs: 6000 });
    expect(schedule.learned).toBeUndefined();
  });

  it('with webhooks nothing probes: the delivery says when the task ends', () => {
    const durations = new DurationModel();
    const { schedule } = durations.pollSchedule(SLUG, TYPE, input, { ...task(0), webhook: true });
    expect(schedule).toMatchObject({ firstDelayMs: 120_000 });
    expect(schedule.rampToMs).toBeUndefined();
  });

  it('where durations vary, spare reads come every half deviation (half a second at least) from a deviation before the mean to two after; none where times are steady or with webhooks', async () => {
    // 10 s of video is 2 units: mean 20 s, deviation 3 s.
    const varied = new DurationModel({ [SLUG]: { mean: 10_000, variance: 1500 ** 2, samples: 9 } });
    const long = { duration: 10 };
    const { schedule } = varied.pollSchedule(SLUG, TYPE, long, task(1000));
    // None just at the first read (24.0 s), and some after it, for a task that runs long.
    expect(schedule).toMatchObject({ firstDelayMs: 23_025, spareAt: [18_000, 19_500, 21_000, 22_500, 25_500] });
    expect(varied.pollSchedule(SLUG, TYPE, long, { ...task(0), webhook: true }).schedule.spareAt).toBeUndefined();
    // A deviation of 400 ms: spare reads half a second apart at least, two of them.
    const close = new DurationModel({ [SLUG]: { mean: 10_000, variance: 200 ** 2, samples: 9 } });
    expect(close.pollSchedule(SLUG, TYPE, long, task(0)).schedule.spareAt).toEqual([19_600, 20_100]);
    const steady = new DurationModel({ [SLUG]: { mean: 10_000, variance: 50 ** 2, samples: 9 } });
    expect(steady.pollSchedule(SLUG, TYPE, long, task(0)).schedule.spareAt).toBeUndefined();

    // One task's time tells no spread: the tasks that waited for the probe get none; later ones do.
    const learning = new DurationModel();
    const probe = learning.pollSchedule(SLUG, TYPE, input, task(0));
    const follower = learning.pollSchedule(SLUG, TYPE, input, task(0));
    learning.observe(SLUG, TYPE, input, 8_000);
    probe.done();
    expect((await follower.schedule.learned)?.spareAt).toBeUndefined();
    learning.observe(SLUG, TYPE, input, 12_000);
    expect(learning.pollSchedule(SLUG, TYPE, input, task(0)).schedule.spareAt).toHaveLength(5);
    follower.done();
  });
});
