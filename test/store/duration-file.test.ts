import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurationModel } from '../../src/engine/durations.js';
import { DurationFile } from '../../src/store/duration-file.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-durations-'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('DurationFile', () => {
  it('keeps what a run learned, per gateway, for the next run, and keeps the models it did not run', async () => {
    const gateway = 'https://gateway.example/api/v1';
    const first = new DurationFile(join(home, 'unit'), gateway);
    expect(await first.load()).toEqual({});
    first.record('vendor-a/image', { mean: 2000, variance: 100, samples: 3 });
    first.record('vendor-b/video', { mean: 3300, variance: 0, samples: 1 });
    await first.flush();
    const second = new DurationFile(join(home, 'unit'), gateway);
    second.record('vendor-a/image', { mean: 2100, variance: 50, samples: 4 });
    await second.flush();
    expect(await new DurationFile(join(home, 'unit'), gateway).load()).toEqual({
      'vendor-a/image': { mean: 2100, variance: 50, samples: 4 },
      'vendor-b/video': { mean: 3300, variance: 0, samples: 1 },
    });
    // Another gateway starts from the first guesses.
    expect(await new DurationFile(join(home, 'unit'), 'https://other.example/api/v1').load()).toEqual({});
  });

  it('ignores a damaged file and implausible entries', async () => {
    const file = new DurationFile(join(home, 'damaged'), 'g');
    await mkdir(join(file.path, '..'), { recursive: true });
    await writeFile(
      file.path,
      '{"models": {"a": {"mean": -1, "variance": 0, "samples": 1}, "b": {"mean": 5, "variance": 0, "samples": 2}}}',
    );
    expect(await file.load()).toEqual({ b: { mean: 5, variance: 0, samples: 2 } });
    await writeFile(file.path, '{"models": {');
    expect(await file.load()).toEqual({});
  });

  it('times the first poll of a new run from what earlier runs learned', () => {
    const fresh = new DurationModel();
    expect(fresh.firstPoll('vendor-b/video', 'text-to-video', { duration: 5 })).toBeUndefined();
    const seeded = new DurationModel({ 'vendor-b/video': { mean: 3300, variance: 0, samples: 1 } });
    expect(seeded.firstPoll('vendor-b/video', 'text-to-video', { duration: 5 })).toBe(3325);
  });
});

describe('pipeline run --local, twice in one home', () => {
  it('writes the learned durations when a run ends and goes on from them in the next run', async () => {
    const recipe = join(home, 'three.yaml');
    const prompts = '["a", "b", "c"]';
    const withLine = '    with: { prompt: "${{ item }}" }\n';
    const step = `  image:\n    uses: vendor-a/vendor-a-v3-t2i\n    for_each: ${prompts}\n${withLine}`;
    await writeFile(recipe, `version: 1\nname: three\nsteps:\n${step}`);
    const env = { PIPELINE_HOME: join(home, 'cli'), PIPELINE_LOCAL_LATENCY_SCALE: '0.02', CI: 'true' };
    const samples = async () => {
      const file = new DurationFile(join(home, 'cli'), 'local gateway, latency scale 0.02');
      return JSON.parse(await readFile(file.path, 'utf8')).models['vendor-a/vendor-a-v3-t2i'].samples;
    };
    // --no-cache: the second run must run its tasks, not take them from the step cache.
    const first = await execa('node', [cli, 'run', recipe, '--local', '--no-cache'], { reject: false, env });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(await samples()).toBe(3);
    const second = await execa('node', [cli, 'run', recipe, '--local', '--no-cache'], { reject: false, env });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(await samples()).toBe(6);
  });
});
