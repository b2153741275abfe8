import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at most `maxNewSpaceMb` (both semi-spaces together) for the rest of
 * the process. A batch run allocates fast and keeps little, and V8 doubles the young generation up to
 * 32 MB as the run goes, most of it garbage waiting for the next scavenge: at 100,000 rows that was a
 * fifth of the peak RSS. `--max-semi-space-size` would say it, but V8 reads it only on node's command
 * line, which the bin does not own; the growth factor, though, is read at each growth. So after each
 * collection the factor is 1 (no growth) while the young generation is at the cap, and V8's own 2
 * below it, so that a young generation V8 shrank while idle grows back.
 */
export function capYoungGeneration(maxNewSpaceMb: number): void {
  const capBytes = maxNewSpaceMb * 1024 * 1024;
  let capped = false;
  const observer = new PerformanceObserver(() => {
    const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (!newSpace) return;
    const atCap = newSpace.space_size >= capBytes;
    if (atCap === capped) return;
    setFlagsFromString(atCap ? '--semi-space-growth-factor=1' : '--semi-space-growth-factor=2');
    capped = atCap;
  });
  observer.observe({ entryTypes: ['gc'] });
}
