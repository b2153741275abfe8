// The bench's polling floor: above the DAG-aware bound by exactly what reading costs, and equal to
// it where reading costs nothing (no jitter, or requests to spare).
import { describe, expect, it } from 'vitest';
import { pollingFloorMs } from '../../bench/lib/polling-floor.mjs';

/** `count` tasks of each mean, each taking its mean. */
const tasksOf = (count: number, means: number[]) =>
  Array.from({ length: count }, () => means.map((ms) => ({ ms, meanMs: ms }))).flat();

describe('the polling floor', () => {
  it('is the DAG-aware bound when task times do not vary: one read at the end is enough', () => {
    const tasks = tasksOf(100, [1000, 10_000]);
    const bound = Math.max(((2 * tasks.length + 1) / 5) * 1000, (100 * 11_000) / 8);
    expect(pollingFloorMs({ tasks, jitter: 0, places: 8, ratePerS: 5, otherRequests: 1 })).toBeCloseTo(bound, 0);
  });

  it('nears the places bound when requests are plenty, reads then finding each end at once', () => {
    const tasks = tasksOf(100, [2000]);
    const floor = pollingFloorMs({ tasks, jitter: 0.3, places: 8, ratePerS: 1e6 });
    expect(floor / ((100 * 2000) / 8)).toBeGreaterThan(1);
    expect(floor / ((100 * 2000) / 8)).toBeLessThan(1.01);
  });

  it('lies between the bound and one read per task at the top of its window', () => {
    // chain-items at scale 1/3.5: 200 items of 1 s, 2.1 s and 10 s, ±30 %, 8 places, 5 requests a second.
    const tasks = tasksOf(200, [1000, 2143, 10_000]);
    const work = tasks.reduce((sum, task) => sum + task.ms, 0);
    const bound = Math.max(work / 8, ((2 * tasks.length + 1) / 5) * 1000);
    // Each task seen at the top of its window: half the window's width waited, on average.
    const oneRead = Math.max(
      (work + tasks.reduce((sum, t) => sum + 0.3 * t.meanMs, 0)) / 8,
      ((2 * tasks.length + 1) / 5) * 1000,
    );
    const floor = pollingFloorMs({ tasks, jitter: 0.3, places: 8, ratePerS: 5, otherRequests: 1 });
    expect(floor).toBeGreaterThan(bound * 1.05);
    expect(floor).toBeLessThan(oneRead);
  });
});
