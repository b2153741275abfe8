import { expectedMs } from '../actions/durations.js';
import type { LearnedDuration } from '../expected-durations.js';

/** How much work a model input is, in the units the model's time grows with. */
export function workUnits(type: string, input: Record<string, unknown>): number {
  if (type === 'text-to-image')
    return (typeof input.n === 'number' ? input.n : 1) * (input.resolution === '2k' ? 1.8 : 1);
  if (type.endsWith('-to-video')) return (typeof input.duration === 'number' ? input.duration : 5) / 5;
  if (type === 'image-to-image') return input.sequential_image_generation === 'auto' ? 2 : 1;
  return 1;
}

/**
 * Learns, per model, how long a task takes from submission to its end, per unit of work: an
 * exponentially weighted mean and variance of the tasks finished so far, starting from the first
 * guess for the model's type. The poller asks it when to look first.
 */
export class DurationModel {
  private readonly perUnit = new Map<string, LearnedDuration>();

  /**
   * `earlier`: what earlier runs learned (a new run polls well from its first task);
   * `onLearned`: told each model's new figures, to keep them for later runs and other processes.
   */
  constructor(
    earlier: Record<string, LearnedDuration> = {},
    private readonly onLearned?: (slug: string, learned: LearnedDuration) => void,
  ) {
    for (const [slug, learned] of Object.entries(earlier)) this.perUnit.set(slug, learned);
  }

  /** Expected milliseconds from submission to the end of a task of `slug` with this input. */
  expected(slug: string, type: string, input: Record<string, unknown>): number {
    const learned = this.perUnit.get(slug);
    const units = workUnits(type, input);
    return Math.round((learned?.mean ?? expectedMs(type)) * units);
  }

  /**
   * When to look first at a task, in milliseconds after its submission: one standard deviation
   * past the mean, so that most tasks are done at the first poll (with steady durations, just
   * after the mean). Undefined before anything is learned.
   */
  firstPoll(slug: string, type: string, input: Record<string, unknown>): number | undefined {
    const learned = this.perUnit.get(slug);
    if (!learned) return undefined;
    return Math.round((learned.mean + Math.sqrt(learned.variance)) * workUnits(type, input) + 100);
  }

  observe(slug: string, type: string, input: Record<string, unknown>, elapsedMs: number): void {
    const units = workUnits(type, input);
    if (!(elapsedMs > 0) || !(units > 0)) return;
    const sample = elapsedMs / units;
    const current = this.perUnit.get(slug);
    // The first samples count fully; later ones move the mean by a quarter.
    const weight = current ? Math.max(0.25, 1 / (current.samples + 1)) : 1;
    const mean = current ? current.mean + weight * (sample - current.mean) : sample;
    // The weighted variance, updated in the same step (West's incremental form).
    const variance = current ? (1 - weight) * (current.variance + weight * (sample - current.mean) ** 2) : 0;
    const learned = { mean, variance, samples: (current?.samples ?? 0) + 1 };
    this.perUnit.set(slug, learned);
    this.onLearned?.(slug, learned);
  }
}
