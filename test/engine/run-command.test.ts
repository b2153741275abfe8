import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { readMp4Info } from '../../src/local-gateway/media/mp4.js';
import { pipelineInProcess } from '../support/cli.js';
import { pngSize } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

let home: string;
/** The runs' time, and the built-in gateway's that `--local` starts: polls and latencies take no real time. */
const clock = new ManualClock();

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-run-'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

/** `pipeline run …` in this process, through the bin's entry point, its environment over this process's. */
const run = (args: string[], env: Record<string, string> = {}, gateway?: LocalGateway) =>
  pipelineInProcess(['run', ...args], {
    env: { ...process.env, PIPELINE_HOME: home, PIPELINE_LOCAL_LATENCY_SCALE: '0.02', CI: 'true', ...env },
    clock,
    ...(gateway ? { gateway } : {}),
  });

describe('pipeline run --local', () => {
  it('runs launch-kit end to end: real images and a real MP4 in outputs/, copied by --out', async () => {
    const out = join(home, 'kit');
    const result = await run(['recipes/launch-kit.yaml', '--local', '--out', out, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ status: 'succeeded', run_dir: join(home, 'runs', report.run_id) });
    expect(report.files.map((f: string) => f.slice(report.outputs_dir.length + 1))).toEqual([
      'branded.png',
      'clip.mp4',
      'hero-1.png',
      'hero-2.png',
      'hero-3.png',
    ]);
    for (const hero of report.outputs.heroes) {
      expect(hero).toMatchObject({ type: 'image', width: 2048, height: 1152, format: 'png' });
      const png = PNG.sync.read(await readFile(hero.path));
      expect([png.width, png.height]).toEqual([2048, 1152]);
    }
    expect(pngSize(await readFile(report.outputs.branded.path))).toEqual({ width: 2048, height: 1152 });
    const clip = readMp4Info(await readFile(report.outputs.clip.path));
    expect(clip?.durationSeconds).toBeGreaterThanOrEqual(4);
    expect(clip?.width).toBeGreaterThan(0);
    expect((await readdir(out)).sort()).toEqual([
      'branded.png',
      'clip.mp4',
      'heroes-1.png',
      'heroes-2.png',
      'heroes-3.png',
    ]);
    // The console says where the outputs are, step by step, on stderr.
    expect(result.stderr).toMatch(/^✓ hero \d/m);
    expect(result.stderr).toMatch(new RegExp(`✓ run ${report.run_id} succeeded in`));
  });

  it('prints where the outputs are without --json', async () => {
    const result = await run(['recipes/ci-assets.yaml', '--local', '--set', 'palette=["teal"]']);
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^outputs in .*\/runs\/\d{8}-\d{6}-ci-assets-[0-9a-f]{4}\/outputs:$/);
    expect(lines.slice(1).map((l) => l.trim().replace(/ {2}\(\d+ bytes\)$/, ''))).toEqual([
      'backgrounds-1.png',
      'icon.png',
    ]);
  });

  it('runs one thumbnail per batch row under one budget', async () => {
    const result = await run([
      'recipes/batch-thumbnails.yaml',
      '--local',
      '--batch',
      'recipes/data/thumbnails.csv',
      '--json',
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.outputs).toHaveLength(6);
    expect(report.outputs[3].thumbnail).toMatchObject({ width: 1024, height: 440 });
    // Each submission names its row: six rows have six tasks of one step.
    expect(result.stderr).toMatch(/^ {2}row 4 thumbnail: task task_\w+ submitted$/m);
    expect(report.files).toHaveLength(6);
  });

  it('reads a one-row batch as any batch: outputs a list, files and --out folders named by row', async () => {
    const csv = join(home, 'one-row.csv');
    await writeFile(csv, 'title,style,aspect_ratio\nSourdough in a weekend,warm kitchen photograph,4:3\n');
    const out = join(home, 'one-row-out');
    const result = await run(['recipes/batch-thumbnails.yaml', '--local', '--batch', csv, '--out', out, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.outputs).toHaveLength(1);
    expect(report.outputs[0].thumbnail).toMatchObject({ width: 1024, height: 768 });
    expect(report.files.map((path: string) => basename(path))).toEqual(['row-1-thumbnail.png']);
    expect(report.steps.every((step: { row?: number }) => step.row === 0)).toBe(true);
    expect(await readdir(out)).toEqual(['row-1']);
    expect(await readdir(join(out, 'row-1'))).toEqual(['thumbnail.png']);
  });

  it('--out with a recipe that has no outputs: says why nothing was copied, and makes no empty folder', async () => {
    const recipe = join(home, 'no-outputs.yaml');
    await writeFile(
      recipe,
      'version: 1\nname: no-outputs\nsteps:\n  img:\n    uses: vendor-a/vendor-a-v3-t2i\n    with: { prompt: a lighthouse, aspect_ratio: "1:1" }\n',
    );
    const out = join(home, 'no-outputs-out');
    const result = await run([recipe, '--local', '--out', out]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^--out: the recipe has no outputs: section, so nothing was copied to .*no-outputs-out; its files are in /m,
    );
    await expect(readdir(out)).rejects.toThrow();
  });

  it('--out copies the files of a list output whose item was skipped, each named by its place, and no JSON for it', async () => {
    const recipe = join(home, 'skipped-item.yaml');
    await writeFile(
      recipe,
      [
        'version: 1',
        'name: skipped-item',
        'steps:',
        '  bg:',
        '    uses: vendor-a/vendor-a-v3-t2i',
        '    for_each: [red, green, blue]',
        '    with: { prompt: "a ${{ item }} background", aspect_ratio: "1:1" }',
        '  badge:',
        '    uses: vendor-b/vendor-b-5.0-lite-edit',
        '    for_each: ${{ steps.bg.outputs }}',
        '    if: ${{ index != 1 }}',
        '    with: { prompt: add a badge, image: ["${{ item.images[0].url }}"], size: 1024x1024 }',
        'outputs:',
        '  badges: ${{ steps.badge.outputs[*].images[0] }}',
        '',
      ].join('\n'),
    );
    const out = join(home, 'skipped-item-out');
    const result = await run([recipe, '--local', '--out', out]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['badges-1.jpg', 'badges-3.jpg']);
  });

  it('refuses an invalid recipe with exit 2 and runs nothing', async () => {
    const result = await run(['recipes/launch-kit.yaml', '--local', '--set', 'count=99']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("command line:1:13: error: input 'count' must be at most 9, got 99");
    expect(result.stderr).toContain('pipeline: 1 error in the command line; nothing was run');
  });
});

describe('pipeline run --webhook-listen', () => {
  it('refuses an address that is not HOST:PORT before anything starts: exit 2, no run', async () => {
    const runIds = () => readdir(join(home, 'runs')).catch(() => [] as string[]);
    const before = await runIds();
    for (const listen of ['nonsense', ':8080', '127.0.0.1:99999', 'localhost:abc']) {
      const result = await run(['recipes/starter.yaml', '--local', '--webhook-listen', listen]);
      expect(result.exitCode, listen).toBe(2);
      expect(result.stderr).toContain(
        `pipeline: --webhook-listen must be HOST:PORT, such as 127.0.0.1:9000 (port 0 takes a free one), got ${JSON.stringify(listen)}`,
      );
    }
    expect(await runIds()).toEqual(before);
  });

  it('takes every result by webhook at a free port it binds itself, with no --webhook-url', async () => {
    const gateway = await startLocalGateway({ clock, latencyScale: 0.02, seed: 5 });
    try {
      const env = { PIPELINE_BASE_URL: gateway.baseUrl, PIPELINE_API_KEY: gateway.apiKey };
      const result = await run(
        ['recipes/ci-assets.yaml', '--set', 'palette=["teal","amber"]', '--webhook-listen', '127.0.0.1:0', '--json'],
        env,
        gateway,
      );
      expect(result.exitCode, result.stderr).toBe(0);
      const stats = gateway.stats();
      const tasks = Object.values(stats.tasks.submitted).reduce((a, b) => a + b, 0);
      expect(tasks).toBeGreaterThan(0);
      expect(stats.webhooks.delivered).toBe(tasks);
    } finally {
      await gateway.close();
    }
  });
});
