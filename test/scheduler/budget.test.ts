import { describe, expect, it } from 'vitest';
import type { RequestPurpose } from '../../src/gateway/gate.js';
import { RateBudget } from '../../src/scheduler/budget.js';
import { ReadForecast } from '../../src/scheduler/read-forecast.js';
import { waitForGrant } from '../../src/scheduler/waiters.js';
import { ManualClock } from '../support/manual-clock.js';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

/** Acquires without waiting for the grant; `granted()` tells whether it came. */
function request(budget: RateBudget, purpose?: RequestPurpose) {
  let release: (() => void) | undefined;
  const pending = budget.acquire(undefined, purpose).then((r) => (release = r));
  return { pending, granted: () => release !== undefined, release: () => release!() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('RateBudget', () => {
  it('sends one request at a time until the first answer tells the limit', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, resetMarginMs: 0 });
    const first = request(budget);
    const second = request(budget);
    await settle();
    expect([first.granted(), second.granted()]).toEqual([true, false]);
    budget.observe({ status: 200, observedAt: T0, limit: 10, remaining: 9, resetAt: T0 + 60_000 });
    first.release();
    await settle();
    expect(second.granted()).toBe(true);
  });

  it('never has more unanswered requests than the window has left, and waits for the reset', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, resetMarginMs: 0 });
    budget.observe({ status: 200, observedAt: T0, limit: 3, remaining: 2, resetAt: T0 + 10_000 });
    const requests = [request(budget), request(budget), request(budget)];
    await settle();
    expect(requests.map((r) => r.granted())).toEqual([true, true, false]);
    // Answers in reverse order: the smallest remaining of the window is the true one.
    budget.observe({ status: 200, observedAt: T0, limit: 3, remaining: 0, resetAt: T0 + 10_000 });
    budget.observe({ status: 200, observedAt: T0, limit: 3, remaining: 1, resetAt: T0 + 10_000 });
    requests[0]!.release();
    requests[1]!.release();
    await settle();
    expect(requests[2]!.granted()).toBe(false);
    await clock.advance(9_999);
    expect(requests[2]!.granted()).toBe(false);
    await clock.advance(1);
    expect(requests[2]!.granted()).toBe(true);
  });

  it('pauses everything after a 429 until Retry-After, with the margin', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, resetMarginMs: 250, random: () => 0 });
    budget.observe({ status: 429, observedAt: T0, limit: 5, remaining: 0, resetAt: T0 + 30_000, retryAfterMs: 30_000 });
    expect(budget.rateLimitedCount).toBe(1);
    const next = request(budget);
    await clock.advance(30_249);
    expect(next.granted()).toBe(false);
    await clock.advance(1);
    expect(next.granted()).toBe(true);
  });

  it('keeps to --rpm below the gateway limit, over a rolling minute', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, maxPerMinute: 2, resetMarginMs: 0 });
    budget.observe({ status: 200, observedAt: T0, limit: 100, remaining: 100, resetAt: T0 + 60_000 });
    const requests = [request(budget), request(budget), request(budget)];
    await settle();
    for (const r of requests) if (r.granted()) r.release();
    expect(requests.map((r) => r.granted())).toEqual([true, true, false]);
    await clock.advance(59_999);
    expect(requests[2]!.granted()).toBe(false);
    await clock.advance(1);
    expect(requests[2]!.granted()).toBe(true);
  });

  it('gives up a wait when its signal aborts', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock });
    request(budget);
    const controller = new AbortController();
    const waiting = budget.acquire(controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    expect(budget.snapshot().waiting).toBe(0);
  });

  it('going on alone from a shared state, uses only its share of what the gateway says is left', async () => {
    const clock = new ManualClock(T0);
    // Three processes were on the key; 9 requests were left and one of ours is still unanswered.
    const budget = new RateBudget({
      clock,
      resetMarginMs: 0,
      share: 1 / 3,
      initial: { limit: 30, remaining: 9, resetAt: T0 + 6_000, unanswered: 1 },
    });
    const requests = Array.from({ length: 12 }, () => request(budget));
    await settle();
    // A third of 9 is 3, one of them taken by the request still in flight.
    expect(requests.filter((r) => r.granted())).toHaveLength(2);
    budget.releaseUnanswered();
    await settle();
    expect(requests.filter((r) => r.granted())).toHaveLength(3);
    // The next window: a third of the limit, 10, less the 3 still unanswered.
    await clock.advance(6_000);
    expect(requests.filter((r) => r.granted())).toHaveLength(10);
    expect(budget.snapshot().unanswered).toBe(10);
  });

  it('counts the sends it is given of the last minute against the cap: no burst when it takes over', async () => {
    const clock = new ManualClock(T0);
    // Another budget sent 3 of a cap of 4 in the last minute, at T0 - 50 s, T0 - 20 s and T0 - 1 s.
    const budget = new RateBudget({
      clock,
      resetMarginMs: 0,
      maxPerMinute: 4,
      initial: { limit: 100, remaining: 100, resetAt: T0 + 600_000 },
      sentAt: [T0 - 20_000, T0 - 50_000, T0 - 1_000],
    });
    const requests = Array.from({ length: 3 }, () => request(budget));
    await settle();
    expect(requests.filter((r) => r.granted())).toHaveLength(1);
    for (const r of requests.filter((r) => r.granted())) r.release();
    await clock.advance(9_999);
    expect(requests.filter((r) => r.granted())).toHaveLength(1);
    await clock.advance(1);
    expect(requests.filter((r) => r.granted())).toHaveLength(2);
    await clock.advance(30_000);
    expect(requests.filter((r) => r.granted())).toHaveLength(3);
  });

  it('leaves the requests still waiting in a shared queue when closed, for the next budget to grant', async () => {
    const clock = new ManualClock(T0);
    const queue: Parameters<typeof waitForGrant>[0] = [];
    const first = new RateBudget({ clock, resetMarginMs: 0, waiters: queue, maxPerMinute: 1 });
    const granted: number[] = [];
    const waiting = [0, 1, 2].map((n) =>
      waitForGrant(queue, undefined, () => first.grantWaiting()).then(() => granted.push(n)),
    );
    await settle();
    expect(granted).toEqual([0]);
    await first.close();
    expect(queue).toHaveLength(2);
    // A closed budget grants nothing more, even when its wake-up would have come.
    await clock.advance(60_000);
    expect(granted).toEqual([0]);
    const second = new RateBudget({ clock, resetMarginMs: 0, waiters: queue, initial: { limit: 9, remaining: 9 } });
    second.grantWaiting();
    await Promise.all(waiting);
    expect(granted).toEqual([0, 1, 2]);
  });

  it('grants the reads of tasks in flight first, then submissions, then the rest, each in order of arrival', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, resetMarginMs: 0 });
    budget.observe({ status: 200, observedAt: T0, limit: 6, remaining: 0, resetAt: T0 + 1_000 });
    const purposes: RequestPurpose[] = ['other', 'submit', 'task-read', 'other', 'task-read', 'submit'];
    const order: string[] = [];
    const waiting = purposes.map((purpose, n) =>
      budget.acquire(undefined, purpose).then((release) => {
        order.push(`${purpose} ${n}`);
        release();
      }),
    );
    await settle();
    expect(order).toEqual([]);
    await clock.advance(1_000);
    await Promise.all(waiting);
    expect(order).toEqual(['task-read 2', 'task-read 4', 'submit 1', 'submit 5', 'other 0', 'other 3']);
  });

  it('paces the reads of tasks in flight over the window once its length is known, letting submissions by', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, resetMarginMs: 0, forecast: new ReadForecast() });
    // Windows of 6 s: believed once two steps between resets agree, at the third window.
    for (const window of [1, 2, 3]) {
      budget.observe({ status: 200, observedAt: clock.now(), limit: 30, remaining: 30, resetAt: T0 + 6_000 * window });
      if (window === 3) break;
      // Until then six reads all go.
      const unpaced = Array.from({ length: 6 }, () => request(budget, 'task-read'));
      await settle();
      expect(unpaced.every((r) => r.granted())).toBe(true);
      for (const r of unpaced) r.release();
      await clock.advance(6_000);
    }
    expect(budget.hasSpareRoom()).toBe(true);
    // 30 requests in 6 s: a burst of 3 reads, then one each 200 ms.
    const reads = Array.from({ length: 5 }, () => request(budget, 'task-read'));
    await settle();
    expect(reads.map((r) => r.granted())).toEqual([true, true, true, false, false]);
    // No spare read while the pace holds the reads.
    expect(budget.hasSpareRoom()).toBe(false);
    // A submission behind the held reads goes at once, and the reads after it keep their pace.
    const submit = request(budget, 'submit');
    await settle();
    expect(submit.granted()).toBe(true);
    await clock.advance(399);
    expect(reads[3]!.granted()).toBe(false);
    await clock.advance(1);
    expect(reads.map((r) => r.granted())).toEqual([true, true, true, true, false]);
    await clock.advance(200);
    expect(reads[4]!.granted()).toBe(true);
  });

  it('takes a reset moved by a second within the window for a rounding, and forgets a window a reset lies beyond', async () => {
    const clock = new ManualClock(T0);
    const budget = new RateBudget({ clock, resetMarginMs: 0 });
    const allGo = async () => {
      const reads = Array.from({ length: 6 }, () => request(budget, 'task-read'));
      await settle();
      const granted = reads.map((r) => r.granted());
      for (const r of reads) if (r.granted()) r.release();
      await Promise.all(reads.map((r) => r.pending));
      return granted.every(Boolean);
    };
    // A gateway that gives its reset as seconds from now: 6 s, then 7 s a moment later, is a rounding.
    budget.observe({ status: 200, observedAt: T0, limit: 30, remaining: 30, resetAt: T0 + 6_000 });
    budget.observe({ status: 200, observedAt: T0, limit: 30, remaining: 30, resetAt: T0 + 7_000 });
    for (const window of [2, 3]) {
      await clock.advance(6_000);
      budget.observe({ status: 200, observedAt: clock.now(), limit: 30, remaining: 30, resetAt: T0 + 6_000 * window });
    }
    // Steps of 6 s and 6 s: the window is 6 s, and reads are paced.
    expect(await allGo()).toBe(false);
    // A reset 60 s away: the window was not 6 s; nothing is paced until it is learned again.
    await clock.advance(6_000);
    budget.observe({ status: 200, observedAt: clock.now(), limit: 30, remaining: 30, resetAt: clock.now() + 60_000 });
    expect(await allGo()).toBe(true);
  });

  it('has spare room only beyond what waits, what is unanswered, the reads expected before the reset and a tenth of the window', async () => {
    const clock = new ManualClock(T0);
    const forecast = new ReadForecast();
    const budget = new RateBudget({ clock, resetMarginMs: 0, forecast });
    // Nothing known of the window yet: no room to spare.
    expect(budget.hasSpareRoom()).toBe(false);
    budget.observe({ status: 200, observedAt: T0, limit: 20, remaining: 6, resetAt: T0 + 6_000 });
    // 6 left, 2 kept for requests not foreseen.
    expect(budget.hasSpareRoom()).toBe(true);
    // A task read at 1 s, then every 2 s: reads at 1, 3 and 5 s before the reset at 6 s.
    const task = forecast.task();
    task.expect(T0 + 1_000, 2_000);
    expect(budget.hasSpareRoom()).toBe(true);
    const other = forecast.task();
    other.expect(T0 + 5_500);
    // 6 - 2 kept - 4 reads expected: none to spare.
    expect(budget.hasSpareRoom()).toBe(false);
    // A read expected after the reset takes nothing of this window.
    other.expect(T0 + 6_000);
    expect(budget.hasSpareRoom()).toBe(true);
    const held = request(budget);
    await settle();
    expect(held.granted()).toBe(true);
    expect(budget.hasSpareRoom()).toBe(false);
    held.release();
    task.end();
    expect(budget.hasSpareRoom()).toBe(true);
    // At the reset the count of the next window is not known until an answer tells it.
    await clock.advance(6_000);
    expect(budget.hasSpareRoom()).toBe(false);
  });

  it('once the window is learned, counts a window no answer has told of yet as full, until its end', async () => {
    const clock = new ManualClock(T0);
    const forecast = new ReadForecast();
    const budget = new RateBudget({ clock, resetMarginMs: 100, forecast });
    // Windows of 6 s, learned at the third; the third is spent.
    for (const window of [1, 2, 3]) {
      budget.observe({ status: 200, observedAt: clock.now(), limit: 20, remaining: 0, resetAt: T0 + 6_000 * window });
      if (window < 3) await clock.advance(6_000);
    }
    expect(budget.hasSpareRoom()).toBe(false);
    // Past the reset, within its margin: the gateway may not have rolled over yet.
    await clock.advance(6_050);
    expect(budget.hasSpareRoom()).toBe(false);
    // Past the margin, nothing sent since: the new window's 20 are there, 2 kept.
    await clock.advance(100);
    expect(budget.hasSpareRoom()).toBe(true);
    // Reads expected before that window's end (at T0 + 24 s) take its room: 17 of them leave 1.
    const tasks = Array.from({ length: 17 }, () => forecast.task());
    for (const task of tasks) task.expect(T0 + 23_000);
    expect(budget.hasSpareRoom()).toBe(true);
    const last = forecast.task();
    last.expect(T0 + 23_000);
    expect(budget.hasSpareRoom()).toBe(false);
    // Two windows later, still nothing told, those tasks ended: the window then, counted the same way.
    for (const task of [...tasks, last]) task.end();
    await clock.advance(12_000);
    expect(budget.hasSpareRoom()).toBe(true);
  });
});
