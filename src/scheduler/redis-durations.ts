import { createHash } from 'node:crypto';
import { isLearnedDuration, type DurationStore, type LearnedDuration } from '../expected-durations.js';
import type { RedisPair } from './redis-connection.js';

/**
 * Learned durations shared through Redis by every process on one gateway: a hash per gateway,
 * one field per model. Written as each process learns (the latest figures win), read when a run
 * starts, so that a new process polls well from its first task. Redis being away only means
 * the figures are not shared: nothing waits on it.
 */
export class RedisDurations implements DurationStore {
  private readonly key: string;

  constructor(
    private readonly redis: RedisPair,
    gateway: string,
  ) {
    this.key = `pipeline:durations:{${createHash('sha256').update(gateway).digest('hex').slice(0, 32)}}`;
  }

  async load(): Promise<Record<string, LearnedDuration>> {
    let fields: Record<string, string>;
    try {
      fields = await this.redis.commands.hgetall(this.key);
    } catch {
      return {};
    }
    const learned: Record<string, LearnedDuration> = {};
    for (const [slug, text] of Object.entries(fields)) {
      try {
        const value: unknown = JSON.parse(text);
        if (isLearnedDuration(value)) learned[slug] = value;
      } catch {
        // A field another version wrote: ignored.
      }
    }
    return learned;
  }

  record(slug: string, learned: LearnedDuration): void {
    this.redis.commands.hset(this.key, slug, JSON.stringify(learned)).catch(() => {});
  }

  async flush(): Promise<void> {}
}
