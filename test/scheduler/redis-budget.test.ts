import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestPurpose } from '../../src/gateway/gate.js';
import { RedisBudget } from '../../src/scheduler/redis-budget.js';
import { budgetScope, openRedis, type RedisPair } from '../../src/scheduler/redis-connection.js';
import { RedisDurations } from '../../src/scheduler/redis-durations.js';
import { ManualClock } from '../support/manual-clock.js';
import { redisTestsRun, startRedis, type RedisServer } from '../support/redis-server.js';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const BASE = 'http://127.0.0.1:9/api/v1';

/** Waits for real I/O (Redis round trips), never for clock time. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

/**
 * Moves the manual clock `ms` ahead in small steps, giving each step's Redis round trips real time,
 * then waits for `condition`: a budget re-arms its timer only after its script's answer arrives.
 */
async function advanceUntil(clock: ManualClock, ms: number, condition: () => boolean, what: string): Promise<void> {
  for (let moved = 0; moved < ms; moved += 250) {
    await clock.advance(250);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await until(condition, what);
}

function request(budget: RedisBudget, purpose?: RequestPurpose) {
  let release: (() => void) | undefined;
  void budget.acquire(undefined, purpose).then((r) => (release = r));
  return { budget, granted: () => release !== undefined, release: () => release!() };
}

describe.skipIf(!redisTestsRun)('RedisBudget on a real redis-server', () => {
  let server: RedisServer;
  const opened: Array<{ pair: RedisPair; budget: RedisBudget }> = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const { pair, budget } of opened) {
      await budget.close();
      await pair.close();
    }
    await server.stop();
  });

  async function budgetFor(clock: ManualClock, apiKey: string, warnings: string[] = [], leaseMs?: number) {
    const pair = await openRedis(server.url);
    if (!pair.ok) throw new Error(pair.error);
    const scope = budgetScope(apiKey, BASE);
    const budget = new RedisBudget({
      clock,
      redis: pair.value,
      scope,
      shownUrl: server.url,
      warn: (text) => warnings.push(text),
      resetMarginMs: 0,
      random: () => 0,
      ...(leaseMs ? { leaseMs } : {}),
    });
    opened.push({ pair: pair.value, budget });
    // The subscription is in place before the test goes on.
    await until(() => pair.value.subscriber.status === 'ready', 'the subscriber');
    await pair.value.subscriber.ping().catch(() => {});
    return { budget, pair: pair.value };
  }

  it('makes two processes on one key follow one window: together they never exceed what it has left', async () => {
    const clock = new ManualClock(T0);
    const a = await budgetFor(clock, 'key-one-window');
    const b = await budgetFor(clock, 'key-one-window');
    a.budget.observe({ status: 200, observedAt: T0, limit: 3, remaining: 3, resetAt: T0 + 10_000 });
    await a.pair.commands.ping();
    const requests = [request(a.budget), request(b.budget), request(a.budget), request(b.budget)];
    await until(() => requests.filter((r) => r.granted()).length === 3, 'three grants');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests.filter((r) => r.granted())).toHaveLength(3);
    // An answer releases a place, but the window has none left until its reset. As in the client,
    // the answer's headers are told before its place is released (by one process, in order).
    const answered = requests.find((r) => r.granted())!;
    const waiting = requests.find((r) => !r.granted())!;
    answered.budget.observe({ status: 200, observedAt: T0, limit: 3, remaining: 0, resetAt: T0 + 10_000 });
    answered.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(waiting.granted()).toBe(false);
    await advanceUntil(clock, 9_750, () => true, 'time');
    expect(waiting.granted()).toBe(false);
    await advanceUntil(clock, 500, () => waiting.granted(), 'the grant after the reset');
  });

  it('paces the reads of tasks in flight over the shared window once its length is known, letting the others by', async () => {
    const clock = new ManualClock(T0);
    const a = await budgetFor(clock, 'key-read-pace');
    const b = await budgetFor(clock, 'key-read-pace');
    // Windows of 6 s: believed at the third (see read-pace.ts); until then reads all go.
    for (const window of [1, 2, 3]) {
      a.budget.observe({
        status: 200,
        observedAt: clock.now(),
        limit: 30,
        remaining: 30,
        resetAt: T0 + 6_000 * window,
      });
      await a.pair.commands.ping();
      if (window === 3) break;
      const unpaced = Array.from({ length: 6 }, () => request(a.budget, 'task-read'));
      await until(() => unpaced.every((r) => r.granted()), 'six reads before the window is known');
      for (const r of unpaced) r.release();
      await a.pair.commands.ping();
      await clock.advance(6_000);
    }
    // 30 requests in 6 s: a burst of 3 reads, then one each 200 ms.
    const reads = Array.from({ length: 5 }, () => request(a.budget, 'task-read'));
    await until(() => reads.filter((r) => r.granted()).length === 3, 'the burst');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads.map((r) => r.granted())).toEqual([true, true, true, false, false]);
    // A submission of the other process goes at once, and the reads keep their pace after it.
    const submit = request(b.budget, 'submit');
    await until(() => submit.granted(), 'the submission');
    await clock.advance(399);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads[3]!.granted()).toBe(false);
    await clock.advance(1);
    await until(() => reads[3]!.granted(), 'the fourth read, 400 ms on');
    expect(reads[4]!.granted()).toBe(false);
    await clock.advance(200);
    await until(() => reads[4]!.granted(), 'the fifth read, 200 ms later');
  });

  it('pauses every process on the key when one of them gets a 429', async () => {
    const clock = new ManualClock(T0);
    const a = await budgetFor(clock, 'key-pause');
    const b = await budgetFor(clock, 'key-pause');
    a.budget.observe({ status: 429, observedAt: T0, limit: 5, remaining: 0, resetAt: T0 + 4_000, retryAfterMs: 4_000 });
    await a.pair.commands.ping();
    const waiting = request(b.budget);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(waiting.granted()).toBe(false);
    expect(b.budget.snapshot().pausedUntil).toBe(T0 + 4_000);
    await advanceUntil(clock, 3_750, () => true, 'time');
    expect(waiting.granted()).toBe(false);
    await advanceUntil(clock, 500, () => waiting.granted(), 'the grant after the pause');
  });

  it('keeps two keys (two teams) on one Redis apart', async () => {
    const clock = new ManualClock(T0);
    const teamA = await budgetFor(clock, 'key-team-a');
    const teamB = await budgetFor(clock, 'key-team-b');
    teamA.budget.observe({
      status: 429,
      observedAt: T0,
      limit: 1,
      remaining: 0,
      resetAt: T0 + 60_000,
      retryAfterMs: 60_000,
    });
    await teamA.pair.commands.ping();
    const a = request(teamA.budget);
    const b = [request(teamB.budget)];
    await until(() => b[0]!.granted(), "team B's grant");
    b[0]!.release();
    teamB.budget.observe({ status: 200, observedAt: T0, limit: 10, remaining: 9, resetAt: T0 + 60_000 });
    b.push(request(teamB.budget), request(teamB.budget));
    await until(() => b.every((r) => r.granted()), "team B's grants");
    expect(a.granted()).toBe(false);
    expect(teamA.budget.snapshot().pausedUntil).toBe(T0 + 60_000);
    expect(teamB.budget.snapshot().pausedUntil).toBe(0);
  });

  it('lets the place of a process that died go when its lease expires', async () => {
    const clock = new ManualClock(T0);
    const dying = await budgetFor(clock, 'key-lease', [], 9_000);
    const survivor = await budgetFor(clock, 'key-lease', [], 9_000);
    // Nothing is known yet: one request at a time for the whole key.
    const held = request(dying.budget);
    await until(() => held.granted(), 'the first grant');
    await dying.budget.close();
    await dying.pair.close();
    const waiting = request(survivor.budget);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(waiting.granted()).toBe(false);
    await advanceUntil(clock, 8_750, () => true, 'time');
    expect(waiting.granted()).toBe(false);
    await advanceUntil(clock, 500, () => waiting.granted(), 'the grant after the lease expired');
  });

  it('goes on locally when Redis is lost, warns, and rejoins when it is back, saying so', async () => {
    const clock = new ManualClock(T0);
    const warnings: string[] = [];
    const { budget, pair } = await budgetFor(clock, 'key-lost', warnings);
    budget.observe({ status: 200, observedAt: T0, limit: 50, remaining: 50, resetAt: T0 + 60_000 });
    await pair.commands.ping();
    const before = request(budget);
    await until(() => before.granted(), 'a shared grant');
    await server.stop();
    await until(() => !budget.shared, 'the fallback');
    const during = [request(budget), request(budget)];
    await until(() => during.every((r) => r.granted()), 'local grants');
    before.release();
    during[0]!.release();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/lost Redis at redis:\/\/127\.0\.0\.1:\d+/);
    await server.start();
    await until(() => budget.shared, 'the rejoin');
    // The restarted Redis learned the window from this process when it rejoined.
    budget.observe({ status: 200, observedAt: T0, limit: 50, remaining: 40, resetAt: T0 + 60_000 });
    const after = request(budget);
    await until(() => after.granted(), 'a shared grant after the rejoin');
    // The leases of both requests still unanswered are in Redis again.
    const leases = await pair.commands.zcard(`pipeline:budget:{${budgetScope('key-lost', BASE)}}:leases`);
    expect(leases).toBe(2);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/^note: Redis at redis:\/\/127\.0\.0\.1:\d+ is back; sharing the budget again$/);
  });

  it('goes on pacing reads at once when Redis is lost: the local budget takes the window this process learned', async () => {
    const clock = new ManualClock(T0);
    const { budget, pair } = await budgetFor(clock, 'key-lost-pace');
    for (const window of [1, 2, 3]) {
      budget.observe({ status: 200, observedAt: clock.now(), limit: 30, remaining: 30, resetAt: T0 + 6_000 * window });
      await pair.commands.ping();
      if (window < 3) await clock.advance(6_000);
    }
    await server.stop();
    await until(() => !budget.shared, 'the fallback');
    // 30 requests in 6 s: a burst of 3 reads, then one each 200 ms, without three windows to learn it again.
    const reads = Array.from({ length: 5 }, () => request(budget, 'task-read'));
    await until(() => reads.filter((r) => r.granted()).length === 3, 'the burst');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reads.map((r) => r.granted())).toEqual([true, true, true, false, false]);
    await clock.advance(200);
    await until(() => reads[3]!.granted(), 'the fourth read, 200 ms on');
    expect(reads[4]!.granted()).toBe(false);
    await server.start();
    await until(() => budget.shared, 'the rejoin');
  });

  it('shares learned durations per gateway: a new process starts from what another learned', async () => {
    const writer = await openRedis(server.url);
    const reader = await openRedis(server.url);
    if (!writer.ok || !reader.ok) throw new Error('no Redis');
    try {
      new RedisDurations(writer.value, 'https://g.example/api/v1').record('vendor-b/video', {
        mean: 3300,
        variance: 4,
        samples: 2,
      });
      await writer.value.commands.ping();
      expect(await new RedisDurations(reader.value, 'https://g.example/api/v1').load()).toEqual({
        'vendor-b/video': { mean: 3300, variance: 4, samples: 2 },
      });
      expect(await new RedisDurations(reader.value, 'https://other.example/api/v1').load()).toEqual({});
    } finally {
      await writer.value.close();
      await reader.value.close();
    }
  });
});
