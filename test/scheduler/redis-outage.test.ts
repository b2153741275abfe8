import { endpointsOf } from '../support/http.js';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpGatewayClient } from '../../src/gateway/client.js';
import type { RequestGate } from '../../src/gateway/gate.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { RedisBudget } from '../../src/scheduler/redis-budget.js';
import { budgetScope, openRedis, type RedisPair } from '../../src/scheduler/redis-connection.js';
import { ManualClock } from '../support/manual-clock.js';
import { redisTestsRun, startRedis, type RedisServer } from '../support/redis-server.js';
import { requestsInFlight, runSkippingTime } from '../support/time-skipping.js';

/**
 * The shared budget while a real redis-server stops and starts under it, with the requests made
 * through the real client to the built-in gateway, every one of them on one time-skipping clock.
 *
 * Real restarts and a manual clock meet this way: while Redis is being stopped or started, and
 * until the budget has seen it (changed its mode), the test marks itself busy, so the clock
 * stands still; the restart takes what real time it takes, and the moments at which the budget's
 * mode changes are fixed by the number of grants, not by how fast the machine is. Every wait on
 * real time is for a condition, with a deadline.
 */

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const MODELS = 'GET /api/v1/models';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Waits in real time for `condition`, polling; fails naming `what` after `deadlineMs`. */
async function until(condition: () => boolean, what: string, deadlineMs = 15_000): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > deadlineMs) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The largest number of grants in any rolling minute (a grant at t and one at t + 60 s are in two minutes). */
function busiestMinute(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while (sorted[first]! <= sorted[last]! - 60_000) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

interface Grant {
  at: number;
  shared: boolean;
  process: number;
}

/**
 * A gateway on the manual clock, a Redis, and `processes` RedisBudgets on one key (one each, as
 * separate processes would have), each with a client behind it. The gate a client asks records each
 * grant (time, mode, process) and checks after each grant and each release that its budget counts
 * exactly the requests granted and not yet released, whatever its mode; it releases twice, which
 * must count once.
 */
async function setup(options: { rpm: number; gatewayRpm: number; gatewayWindowSeconds: number; processes?: number }) {
  const clock = new ManualClock(T0);
  const server: RedisServer = await startRedis();
  cleanups.push(() => server.stop());
  const gateway: LocalGateway = await startLocalGateway({
    rpm: options.gatewayRpm,
    windowSeconds: options.gatewayWindowSeconds,
    latencyScale: 0,
    seed: 20,
    clock,
  });
  cleanups.push(() => gateway.close());
  const scope = budgetScope(gateway.apiKey, gateway.baseUrl);
  const grants: Grant[] = [];
  const miscounts: string[] = [];
  /** True while the test stops or starts Redis and waits for the budgets to see it: the clock stands still. */
  let changing = false;
  let awaited: { count: number; resolve: () => void } | undefined;

  async function startProcess(index: number) {
    const opened = await openRedis(server.url);
    if (!opened.ok) throw new Error(opened.error);
    const pair: RedisPair = opened.value;
    cleanups.push(() => pair.close());
    const warnings: string[] = [];
    const budget = new RedisBudget({
      clock,
      redis: pair,
      scope,
      shownUrl: server.url,
      warn: (text) => warnings.push(text),
      maxPerMinute: options.rpm,
      random: () => 0.5,
    });
    cleanups.push(() => budget.close());
    await until(() => pair.subscriber.status === 'ready', 'the subscriber');
    let held = 0;
    // Checked once the turn's promise callbacks have run: a budget grants several at once, and each
    // grant reaches this gate a callback later.
    const checkCount = (when: string) =>
      setImmediate(() => {
        const counted = budget.snapshot().unanswered;
        if (counted !== held) miscounts.push(`${when} #${grants.length}: counted ${counted}, held ${held}`);
      });
    const gate: RequestGate = {
      async acquire(signal) {
        const release = await budget.acquire(signal);
        held++;
        grants.push({ at: clock.now(), shared: budget.shared, process: index });
        checkCount('grant');
        if (awaited && grants.length >= awaited.count) {
          changing = true;
          awaited.resolve();
          awaited = undefined;
        }
        return () => {
          release();
          release();
          held--;
          checkCount('release');
        };
      },
    };
    const client = new HttpGatewayClient({
      endpoints: endpointsOf(gateway),
      apiKey: gateway.apiKey,
      clock,
      gate,
      onRateLimit: budget.observe,
      random: () => 0.5,
    });
    cleanups.push(() => client.close());
    return { pair, budget, client, warnings };
  }
  const processes: Array<Awaited<ReturnType<typeof startProcess>>> = [];
  for (let i = 0; i < (options.processes ?? 1); i++) processes.push(await startProcess(i));

  /** Resolves once `count` requests were granted, marking the test busy from that very grant. */
  const granted = (count: number) =>
    new Promise<void>((resolve) => {
      if (grants.length < count) {
        awaited = { count, resolve };
        return;
      }
      changing = true;
      resolve();
    });
  const busy = {
    ...requestsInFlight({ gateway }),
    'Redis being stopped or started': () => changing,
    'Redis commands awaiting their answer': () =>
      processes.some(({ pair }) => pair.commands.commandQueue.length > 0 || pair.subscriber.commandQueue.length > 0),
  };
  const stop = async () => {
    await server.stop();
    await until(() => processes.every(({ budget }) => !budget.shared), 'the budgets to fall back');
  };
  const start = async () => {
    await server.start();
    await until(() => processes.every(({ budget }) => budget.shared), 'the budgets to rejoin');
  };
  const { pair, budget, client, warnings } = processes[0]!;
  const leases = () => pair.commands.zcard(`pipeline:budget:{${scope}}:leases`);
  /**
   * Runs `work` with the clock skipping, failing once it has taken `limitMs` of clock time: a request
   * that waits for good would not stop the budget's heartbeat, so the clock would go on moving.
   */
  const within = <T>(limitMs: number, work: Promise<T>) => {
    let timer: { id: number } | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = clock.setTimer(limitMs, () =>
        reject(new Error(`not done after ${limitMs / 1000} s of clock time: ${grants.length} requests granted`)),
      );
    });
    const bounded = Promise.race([work, late]).finally(() => clock.clearTimer(timer!));
    return runSkippingTime(clock, bounded, { busy });
  };
  return {
    clock,
    gateway,
    processes,
    budget,
    client,
    grants,
    miscounts,
    warnings,
    within,
    granted,
    stop,
    start,
    leases,
    done: () => (changing = false),
  };
}

describe.skipIf(!redisTestsRun)('the shared budget while Redis stops and starts', () => {
  it('stop → start → stop → start, then a loss right after a rejoin: every request granted once, none waits for good, no minute over --rpm', {
    timeout: 120_000,
  }, async () => {
    const RPM = 12;
    const COUNT = 60;
    // The gateway allows 4 per 5 s (48 a minute) and the user 12 a minute: both bind, in turn.
    const t = await setup({ rpm: RPM, gatewayRpm: 4, gatewayWindowSeconds: 5 });
    const chaos = async () => {
      await t.granted(8);
      await t.stop();
      t.done();
      await t.granted(18);
      await t.start();
      t.done();
      await t.granted(28);
      await t.stop();
      t.done();
      await t.granted(38);
      await t.start();
      // Lost again as soon as the budget has rejoined: its restore may not have reached Redis.
      await t.stop();
      t.done();
      await t.granted(46);
      await t.start();
      t.done();
    };
    const reads = Promise.all(Array.from({ length: COUNT }, () => t.client.models()));
    // At 12 a minute, 60 requests take 5 minutes; 10 is far more than any outage here costs.
    const [results] = await t.within(10 * 60_000, Promise.all([reads, chaos()]));

    expect(results.filter((result) => !result.ok)).toEqual([]);
    expect(t.grants).toHaveLength(COUNT);
    expect(t.gateway.stats().requests.by_route[MODELS]).toBe(COUNT);
    expect(t.gateway.stats().rate_limited).toBe(0);
    expect(t.miscounts).toEqual([]);
    // Each mode granted some: the shared budget, then the fallback of each outage, then the rejoined one.
    const modes = t.grants.map((grant) => (grant.shared ? 'S' : 'L')).join('');
    expect(modes).toMatch(/^S+L+S+L+S*L+S+$/);
    expect(busiestMinute(t.grants.map((grant) => grant.at))).toBe(RPM);
    expect(t.warnings.filter((text) => text.startsWith('warning: lost Redis'))).toHaveLength(3);
    expect(t.warnings.filter((text) => text.startsWith('note: Redis at'))).toHaveLength(3);
    expect(t.budget.snapshot()).toMatchObject({ unanswered: 0, waiting: 0 });
    await until(() => t.budget.shared, 'the shared budget');
    expect(await t.leases()).toBe(0);
  });

  it('keeps --rpm while Redis is down, counting the requests sent in the last minute before it went', {
    timeout: 60_000,
  }, async () => {
    const RPM = 6;
    const t = await setup({ rpm: RPM, gatewayRpm: 1000, gatewayWindowSeconds: 60 });
    const chaos = async () => {
      await t.granted(4);
      await t.stop();
      t.done();
    };
    const reads = Promise.all(Array.from({ length: 20 }, () => t.client.models()));
    const [results] = await t.within(10 * 60_000, Promise.all([reads, chaos()]));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(t.grants.filter((grant) => !grant.shared).length).toBeGreaterThanOrEqual(14);
    expect(busiestMinute(t.grants.map((grant) => grant.at))).toBe(RPM);
    expect(t.warnings).toEqual([expect.stringMatching(/and at most 6 requests a minute\)/)]);
    expect(t.miscounts).toEqual([]);
  });

  it('counts a process that closed its budget out at once: the one left takes the whole window in an outage', {
    timeout: 60_000,
  }, async () => {
    const t = await setup({ rpm: 12, gatewayRpm: 1000, gatewayWindowSeconds: 60, processes: 2 });
    const [left, closing] = t.processes as [(typeof t.processes)[0], (typeof t.processes)[0]];
    await t.within(60_000, Promise.all([left.client.models(), closing.client.models()]));
    await closing.budget.close();
    t.processes.splice(1, 1);
    const after = async () => {
      await left.client.models();
      await t.granted(t.grants.length);
      await t.stop();
      t.done();
    };
    await t.within(10 * 60_000, after());
    expect(left.warnings).toEqual([expect.stringMatching(/\(1\/1 of the window and at most 12 requests a minute\)/)]);
  });

  it('counts a process on the key from its start, so that one whose only answer came before it takes half the cap when Redis goes', {
    timeout: 60_000,
  }, async () => {
    const t = await setup({ rpm: 12, gatewayRpm: 1000, gatewayWindowSeconds: 60, processes: 2 });
    const [first, second] = t.processes;
    // Only the first process sends before Redis goes: the second has made no request yet.
    const chaos = async () => {
      await t.granted(1);
      await t.stop();
      t.done();
    };
    const [answer] = await t.within(60_000, Promise.all([first!.client.models(), chaos()]));
    expect(answer.ok).toBe(true);
    expect(first!.warnings).toEqual([expect.stringMatching(/\(1\/2 of the window and at most 6 requests a minute\)/)]);
    expect(second!.warnings).toEqual([expect.stringMatching(/\(1\/2 of the window and at most 6 requests a minute\)/)]);
  });

  it('keeps --rpm over two processes while Redis is down: each takes its share, counting what both sent', {
    timeout: 60_000,
  }, async () => {
    const RPM = 12;
    const t = await setup({ rpm: RPM, gatewayRpm: 1000, gatewayWindowSeconds: 60, processes: 2 });
    const chaos = async () => {
      await t.granted(6);
      await t.stop();
      t.done();
    };
    const reads = Promise.all(t.processes.flatMap(({ client }) => Array.from({ length: 20 }, () => client.models())));
    const [results] = await t.within(10 * 60_000, Promise.all([reads, chaos()]));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(t.grants).toHaveLength(40);
    expect(t.grants.filter((grant) => !grant.shared).length).toBeGreaterThanOrEqual(20);
    expect(busiestMinute(t.grants.map((grant) => grant.at))).toBeLessThanOrEqual(RPM);
    for (const { warnings } of t.processes)
      expect(warnings).toEqual([expect.stringMatching(/\(1\/2 of the window and at most 6 requests a minute\)/)]);
    expect(t.miscounts).toEqual([]);
  });
});
