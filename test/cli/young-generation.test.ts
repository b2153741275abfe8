import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../dist/cli/young-generation.js', import.meta.url));

interface Sizes {
  /** The young generation before anything ran, after the analysis, and the largest seen after it, in MB. */
  initial: number;
  afterAnalysis: number;
  largest: number;
}

/**
 * A process that allocates as a batch does (most of it short-lived, some kept a while), yielding to
 * the event loop as a run does, and prints the sizes of its young generation. With `analysis`, it
 * first keeps a million objects in one turn of the event loop, as the analysis of a batch's rows does
 * before a run's tasks start, and then releases a held young generation.
 */
const allocator = (cap: number | undefined, options: { analysis?: boolean; hold?: boolean } = {}) => `
  import { getHeapSpaceStatistics } from 'node:v8';
  const young = await import(${JSON.stringify(module)});
  ${cap === undefined ? '' : `young.capYoungGeneration(${cap}, { holdUntilReleased: ${Boolean(options.hold)} });`}
  const newSpaceMb = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
  const initial = newSpaceMb();
  const rows = [];
  if (${Boolean(options.analysis)}) for (let i = 0; i < 1000000; i++) rows.push({ i });
  const afterAnalysis = newSpaceMb();
  young.releaseYoungGeneration();
  const kept = [];
  let largest = afterAnalysis;
  for (let round = 0; round < 300; round++) {
    for (let i = 0; i < 10000; i++) {
      kept.push({ round, i, text: 'x' + i });
      if (kept.length > 150000) kept.splice(0, 50000);
    }
    largest = Math.max(largest, newSpaceMb());
    await new Promise((resolve) => setImmediate(resolve));
  }
  console.log(JSON.stringify({ initial, afterAnalysis, largest }));
`;

async function youngGenerationSizes(
  cap: number | undefined,
  options: { analysis?: boolean; hold?: boolean } = {},
): Promise<Sizes> {
  const { stdout } = await execa('node', ['--input-type=module', '-e', allocator(cap, options)]);
  return JSON.parse(stdout) as Sizes;
}

/**
 * The most a young generation capped at 4 MB is seen at. The cap acts from a GC observer's callback,
 * which node delivers between turns of the event loop; on a loaded machine it can come after the
 * next collection, and V8 has then doubled the young generation once more (8 MB, in two fresh-clone
 * CI runs of 2026-11-27). V8 alone takes it to 32 MB here.
 */
const CAPPED_AT_MOST = 2 * 4;

describe('capYoungGeneration', () => {
  it('keeps the young generation at its cap, where V8 alone grows it past', async () => {
    const [alone, capped] = await Promise.all([youngGenerationSizes(undefined), youngGenerationSizes(4)]);
    expect(alone.largest).toBeGreaterThan(CAPPED_AT_MOST);
    expect(capped.largest).toBeLessThanOrEqual(CAPPED_AT_MOST);
    expect(capped.largest).toBeGreaterThan(0);
  });

  it('holds the young generation through a long turn of the event loop, which no observer sees, until released', async () => {
    const [alone, unheld, held] = await Promise.all([
      youngGenerationSizes(undefined, { analysis: true }),
      youngGenerationSizes(4, { analysis: true }),
      youngGenerationSizes(4, { analysis: true, hold: true }),
    ]);
    // In one turn V8 grows it past the cap, unless it is held.
    expect(alone.afterAnalysis).toBeGreaterThan(4);
    expect(unheld.afterAnalysis).toBeGreaterThan(4);
    expect(held.afterAnalysis).toBeLessThanOrEqual(4);
    // Released, it grows again, up to the cap.
    expect(held.largest).toBeGreaterThan(held.afterAnalysis);
    expect(held.largest).toBeLessThanOrEqual(CAPPED_AT_MOST);
    expect(alone.largest).toBeGreaterThan(CAPPED_AT_MOST);
  });
});
