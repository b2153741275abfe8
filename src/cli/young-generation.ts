import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Whether the young generation is held at its size until `releaseYoungGeneration`. */
let held = false;

/**
 * Keeps V8's young generation at most `maxNewSpaceMb` (both semi-spaces together) for the rest of
 * the process. A batch run allocates fast and keeps little, and V8 doubles the young generation up to
 * 32 MB as the run goes, most of it garbage waiting for the next scavenge: at 100,000 rows that was a
 * fifth of the peak RSS. `--max-semi-space-size` would say it, but V8 reads it only on node's command
 * line, which the bin does not own; the growth factor, though, is read at each growth. So after each
 * collection the factor is 1 (no growth) while the young generation is at the cap, and V8's own 2
 * below it, so that a young generation V8 shrank while idle grows back.
 *
 * The observer runs only between turns of the event loop: in one long turn V8 doubles the young
 * generation again and again, past the cap, and never gives it back. A run starts with such a turn,
 * the analysis of its batch's rows (at 100,000 rows the young generation went to 32 MB there). With
 * `holdUntilReleased` the young generation does not grow at all until `releaseYoungGeneration`,
 * which the run calls once its tasks start, when the event loop turns between them.
 */
export function capYoungGeneration(maxNewSpaceMb: number, { holdUntilReleased = false } = {}): void {
  const capBytes = maxNewSpaceMb * 1024 * 1024;
  held = holdUntilReleased;
  let growing = !held;
  if (!growing) setFlagsFromString('--semi-space-growth-factor=1');
  const observer = new PerformanceObserver(() => {
    if (held) return;
    const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (!newSpace) return;
    const grow = newSpace.space_size < capBytes;
    if (grow === growing) return;
    setFlagsFromString(grow ? '--semi-space-growth-factor=2' : '--semi-space-growth-factor=1');
    growing = grow;
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** Lets a held young generation grow to its cap from the next collection on; nothing when not held. */
export function releaseYoungGeneration(): void {
  held = false;
}
