import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPaceTime, type WindowState } from '../../src/scheduler/read-pace.js';
import { ACQUIRE } from '../../src/scheduler/redis-scripts.js';
import { redisTestsRun, startRedis, type RedisServer } from '../support/redis-server.js';

/**
 * The read pace exists twice: readPaceTime in TypeScript (RateBudget, one process) and the same
 * rule in Lua inside the acquire script (RedisBudget, a window shared through Redis). Nothing but
 * this test keeps the two alike: it draws window states, asks the real script for one read, and
 * checks that it grants the read exactly when readPaceTime says "now", and otherwise names the
 * same moment to ask again.
 */

const KEYS = ['pace:state', 'pace:leases', 'pace:sent', 'pace:processes'];
const NOW = Date.UTC(2026, 10, 28, 6, 0, 0);

/** A seeded generator, so that a difference found names a state that can be drawn again. */
function seeded(seed: number) {
  let s = seed;
  return (below: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.floor((s / 2147483648) * below);
  };
}

interface Drawn {
  state: WindowState;
  /** Where the window's end comes from: the latest answer's reset, or the steps the process learned. */
  resetAt?: number;
  endHint?: number;
}

/** A window with room for at least one request, its end in the future or unknown. */
function draw(next: (below: number) => number): Drawn {
  const limit = 1 + next(200);
  const remaining = 1 + next(limit);
  const unanswered = next(remaining);
  const windowMs = next(10) === 0 ? undefined : 2000 + next(118_000);
  // Ends up to 1.3 windows away: past a window, both sides clip the end to one window from now.
  const endsIn = 1 + next(Math.round((windowMs ?? 60_000) * 1.3));
  const source = next(3);
  const resetAt = source === 0 ? NOW + endsIn : undefined;
  const endHint = source === 1 ? NOW + endsIn : undefined;
  return { state: { windowMs, limit, remaining, unanswered, endsAt: resetAt ?? endHint }, resetAt, endHint };
}

describe.skipIf(!redisTestsRun)('the read pace in the Redis acquire script', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  /** One read asked of the script in the drawn state: whether it was granted, and when to ask again. */
  async function acquireOneRead({ state, resetAt, endHint }: Drawn): Promise<{ granted: boolean; nextAt: number }> {
    const pipeline = redis.pipeline().del(...KEYS);
    pipeline.hset(KEYS[0]!, 'limit', state.limit!, 'remaining', state.remaining!);
    if (resetAt !== undefined) pipeline.hset(KEYS[0]!, 'resetAt', resetAt);
    for (let i = 0; i < state.unanswered; i++) pipeline.zadd(KEYS[1]!, NOW + 60_000, `other:${i}`);
    // now, wanted, leaseMs, margin, cap, member, first grant, keepMs, windowMs, reads, endHint
    pipeline.eval(ACQUIRE, 4, ...KEYS, NOW, 1, 30_000, 250, 0, 'me', 1, 60_000, state.windowMs ?? 0, 1, endHint ?? -1);
    const answers = await pipeline.exec();
    const [error, reply] = answers!.at(-1)!;
    if (error) throw error;
    const [, nextAt, , , , , , , , readsGranted] = reply as number[];
    return { granted: readsGranted === 1, nextAt: nextAt! };
  }

  it('grants a read exactly when readPaceTime lets it go now, and otherwise waits for the same moment', async () => {
    const next = seeded(20261128);
    let held = 0;
    for (let i = 0; i < 1500; i++) {
      const drawn = draw(next);
      const paceAt = readPaceTime(drawn.state, NOW);
      const script = await acquireOneRead(drawn);
      const expected = paceAt === NOW ? { granted: true, nextAt: NOW } : { granted: false, nextAt: paceAt };
      if (!expected.granted) held++;
      expect({ draw: i, ...drawn, ...script }).toEqual({ draw: i, ...drawn, ...expected });
    }
    // Both answers were drawn often enough for the comparison to mean something.
    expect(held).toBeGreaterThan(300);
    expect(held).toBeLessThan(1200);
  });
});
