import { describe, expect, it } from 'vitest';
import { DurationModel } from '../../src/engine/durations.js';

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
    // Read when a task submitted with the follower is typically done: 0.5 s + 12 s + 0.1 s.
    await expect(follower.schedule.learned).resolves.toEqual({ firstAt: 12_600, intervalMs: 2400 });
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
    expect(schedule).toMatchObject({ firstDelayMs: 20_100 });
    expect(schedule.rampToMs).toBeUndefined();
    expect(schedule.learned).toBeUndefined();
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
});
