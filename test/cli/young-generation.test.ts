import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../dist/cli/young-generation.js', import.meta.url));

// A process that allocates as a batch does (most of it short-lived, some kept a while), yielding to
// the event loop as a run does, and prints the largest young generation it saw, in MB.
const allocator = (cap: number | undefined) => `
  import { getHeapSpaceStatistics } from 'node:v8';
  ${cap === undefined ? '' : `(await import(${JSON.stringify(module)})).capYoungGeneration(${cap});`}
  const newSpaceMb = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
  const kept = [];
  let largest = 0;
  for (let round = 0; round < 300; round++) {
    for (let i = 0; i < 10000; i++) {
      kept.push({ round, i, text: 'x' + i });
      if (kept.length > 150000) kept.splice(0, 50000);
    }
    largest = Math.max(largest, newSpaceMb());
    await new Promise((resolve) => setImmediate(resolve));
  }
  console.log(largest);
`;

async function largestYoungGenerationMb(cap: number | undefined): Promise<number> {
  const { stdout } = await execa('node', ['--input-type=module', '-e', allocator(cap)]);
  return Number(stdout.trim());
}

describe('capYoungGeneration', () => {
  it('keeps the young generation at its cap, where V8 alone grows it past', async () => {
    const [alone, capped] = await Promise.all([largestYoungGenerationMb(undefined), largestYoungGenerationMb(4)]);
    expect(alone).toBeGreaterThan(4);
    expect(capped).toBeLessThanOrEqual(4);
    expect(capped).toBeGreaterThan(0);
  });
});
