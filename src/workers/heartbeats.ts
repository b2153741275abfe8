/**
 * The workers alive on a queue: one sorted set, each worker's id scored with the time its last beat
 * stays valid until, on Redis's own clock (so the machines' clocks need not agree). A coordinator
 * counts the members still valid: one read, however large the Redis's keyspace.
 */
import type { Redis } from 'ioredis';

const aliveKey = (queue: string) => `pipeline:workers:${queue}:alive`;

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const BEAT = `${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 4)
return 1`;

const ALIVE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

/** This worker is alive for `validMs` from now (its take-over time: three beats). */
export async function beat(redis: Redis, queue: string, worker: string, validMs: number): Promise<void> {
  await redis.eval(BEAT, 1, aliveKey(queue), worker, validMs);
}

/** This worker stopped: it no longer counts. */
export async function leave(redis: Redis, queue: string, worker: string): Promise<void> {
  await redis.zrem(aliveKey(queue), worker);
}

/** How many workers on the queue beat recently enough to be alive. */
export async function workersAlive(redis: Redis, queue: string): Promise<number> {
  return Number(await redis.eval(ALIVE, 1, aliveKey(queue)));
}
