import { createHash } from 'node:crypto';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';

/**
 * The gateway's single source of randomness. With a seed, every random choice
 * (ids, jitter, injected faults, generated content) repeats run after run.
 */
export class GatewayRandom {
  private readonly generator;

  constructor(seed: number) {
    this.generator = xoroshiro128plus(seed | 0);
  }

  /** A float in [0, 1). */
  next(): number {
    return uniformFloat64(this.generator);
  }

  /** True with probability `rate`. */
  chance(rate: number): boolean {
    return rate > 0 && this.next() < rate;
  }

  /** `bytes` random bytes as lowercase hex. */
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++) {
      out += uniformInt(this.generator, 0, 255).toString(16).padStart(2, '0');
    }
    return out;
  }
}

/** A stable 32-bit number derived from text: generated content depends on the request, not on call order. */
export function hashToInt(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}
