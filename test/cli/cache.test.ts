import {
  appendFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { readJournal } from '../../src/store/journal.js';
import { pipelineInProcess, pipelineProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway;
// The gateway and every in-process run share it: polls and task latencies take no real time.
const clock = new ManualClock();
let work: string;
let home: string;
let recipe: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0.01, latencyJitter: 0, seed: 9 });
});
afterAll(() => gateway.close());
beforeEach(async (context) => {
  // Each test builds in a fresh copy of the recipe and its assets, with a fresh home and cache.
  work = await mkdtemp(join(tmpdir(), 'pipeline-cache-'));
  cpSync('recipes/ci-assets.yaml', join(work, 'recipes', 'ci-assets.yaml'));
  cpSync('recipes/assets', join(work, 'recipes', 'assets'), { recursive: true });
  home = join(work, 'home');
  recipe = join(work, 'recipes', 'ci-assets.yaml');
  context.onTestFinished(() => rm(work, { recursive: true, force: true }));
});

const env = (extra: Record<string, string> = {}) => ({
  PIPELINE_HOME: home,
  PIPELINE_BASE_URL: gateway.baseUrl,
  PIPELINE_TOOL_URL: gateway.toolUrl,
  PIPELINE_LLM_URL: gateway.llmUrl,
  PIPELINE_SCHEMA_URL: gateway.schemaUrl,
  PIPELINE_API_KEY: gateway.apiKey,
  CI: 'true',
  // The manifest step runs node.
  PATH: process.env.PATH ?? '',
  ...extra,
});
/** `pipeline …` in this process, through the bin's entry point, on the shared manual clock. */
const pipeline = (args: string[], extra: Record<string, string> = {}) =>
  pipelineInProcess(args, { env: env(extra), cwd: work, clock, gateway });
/** `pipeline …` as a process of its own, on real time: for runs that must truly run at once. */
const asProcess = (args: string[], extra: Record<string, string> = {}) =>
  pipelineProcess(args, { env: env(extra), cwd: work });

/** The reads of the gateway check before a run (the key, and the balance the spend checks use). */
const PREFLIGHT = ['GET /api/v1/apikey/validate', 'GET /api/v1/team/balance'];

/** Runs the recipe, and counts the gateway requests it made by route. */
async function build(args: string[] = [], extra: Record<string, string> = {}, run = pipeline) {
  const before = gateway.stats().requests.by_route;
  const result = await run(['run', recipe, '--json', ...args], extra);
  await gateway.settle();
  const after = gateway.stats().requests.by_route;
  const made: Record<string, number> = {};
  for (const [route, count] of Object.entries(after))
    if (count !== (before[route] ?? 0)) made[route] = count - (before[route] ?? 0);
  // The run's check of the gateway before it starts (the key and the balance) is no work a cache could save.
  for (const route of PREFLIGHT) if (made[route] === 1) delete made[route];
  const report = result.exitCode === 0 ? JSON.parse(result.stdout) : undefined;
  return { result, made, submitted: made[SUBMIT] ?? 0, report };
}

const bytesOf = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name)).toString('base64')]),
  );
const cachedItems = (runId: string) =>
  readJournal(join(home, 'runs', runId, 'journal.jsonl'))
    .filter((e) => e.type === 'item-cached')
    .map((e) => (e.type === 'item-cached' ? `${e.step}[${e.index}]` : ''))
    .sort();

describe('the step cache, run after run of ci-assets', () => {
  it('makes no request on the second run, exits 0 and writes byte-identical outputs', async () => {
    const cold = await build(['--out', join(work, 'out1')]);
    expect(cold.result.exitCode, cold.result.stderr).toBe(0);
    expect(cold.submitted).toBe(4);
    // A day later, so that the entries' use can be told from their making.
    await clock.advance(86_400_000);
    const warm = await build(['--out', join(work, 'out2')]);
    expect(warm.result.exitCode, warm.result.stderr).toBe(0);
    // No submission, no upload, no tool or text call, no read of a task: only the balance check.
    expect(warm.made).toEqual({});
    expect(bytesOf(join(work, 'out2'))).toEqual(bytesOf(join(work, 'out1')));
    expect(bytesOf(warm.report.outputs_dir)).toEqual(bytesOf(cold.report.outputs_dir));
    expect(warm.result.stderr).toMatch(/^⚡ backgrounds\[2\] cached$/m);
    expect(warm.result.stderr).toMatch(/^⚡ icon cached$/m);
    expect(warm.report.cache).toEqual({ enabled: true, hits: 4, misses: 0, tasks_saved: 4, requests_saved: 12 });
    const summary = JSON.parse(readFileSync(join(warm.report.run_dir, 'run.json'), 'utf8'));
    expect(summary.cache).toMatchObject({ hits: 4, misses: 0, tasks_saved: 4 });
    // runs show --json prints run.json's summary, the cache's figures included.
    const shown = JSON.parse((await pipeline(['runs', 'show', warm.report.run_id, '--json'])).stdout);
    expect(shown.cache).toEqual(warm.report.cache);
    const events = readJournal(join(warm.report.run_dir, 'journal.jsonl'));
    const stepCached = events
      .filter((e) => e.type === 'step-cached')
      .map((e) => (e.type === 'step-cached' ? e.step : ''));
    expect(stepCached.sort()).toEqual(['backgrounds', 'icon']);
    expect(events.find((e) => e.type === 'item-cached')).toMatchObject({
      key: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // No entry holds the API key.
    const entriesDir = join(home, 'cache', 'entries');
    const entries = readdirSync(entriesDir).flatMap((shard) =>
      readdirSync(join(entriesDir, shard)).map((name) => join(entriesDir, shard, name)),
    );
    expect(entries).toHaveLength(4);
    for (const entry of entries) expect(readFileSync(entry, 'utf8')).not.toContain(gateway.apiKey);
    // Each entry the warm run was served is marked used then (its file's time), which `cache prune`
    // keeps it by; its time of creation stays the cold run's.
    const warmStart = events[0]!.t;
    for (const entry of entries) {
      expect(statSync(entry).mtimeMs).toBeGreaterThanOrEqual(warmStart);
      expect(statSync(entry).mtimeMs).toBeLessThanOrEqual(events.at(-1)!.t);
      expect(JSON.parse(readFileSync(entry, 'utf8')).created_at).toBeLessThan(warmStart);
    }
  });

  it('a rerun the cache serves whole sends no request at all, not even the key check; plan counts the chain', async () => {
    expect((await build()).result.exitCode).toBe(0);
    const before = gateway.stats().requests.total;
    const warm = await pipeline(['run', recipe, '--json']);
    await gateway.settle();
    expect(warm.exitCode, warm.stderr).toBe(0);
    expect(gateway.stats().requests.total).toBe(before);
    // The icon is made from the first background: known from the cache too, so plan counts it.
    const planned = JSON.parse((await pipeline(['plan', recipe, '--json'])).stdout);
    expect(planned.steps.map((s: { id: string; cached: number }) => [s.id, s.cached])).toEqual([
      ['backgrounds', 3],
      ['icon', 1],
      ['manifest', 0],
    ]);
    // An entry whose file was deleted from the folder is not counted cached: the run could not
    // restore it, and a --max-cost that counted it would let through a run it then cuts off.
    const icon = (planned.steps as Array<{ id: string }>).findIndex((step) => step.id === 'icon');
    expect(icon).toBeGreaterThanOrEqual(0);
    const entriesDir = join(home, 'cache', 'entries');
    const iconEntry = readdirSync(entriesDir)
      .flatMap((shard) => readdirSync(join(entriesDir, shard)).map((name) => join(entriesDir, shard, name)))
      .map((path) => JSON.parse(readFileSync(path, 'utf8')))
      .find((entry) => entry.files.some((f: { path: string }) => f.path.endsWith(`${sep}icon.png`)));
    const blob = join(home, 'cache', 'blobs', iconEntry.files[0].sha256.slice(0, 2), iconEntry.files[0].sha256);
    const kept = readFileSync(blob);
    rmSync(blob);
    const withoutBlob = JSON.parse((await pipeline(['plan', recipe, '--json'])).stdout);
    expect(withoutBlob.steps.map((s: { id: string; cached: number }) => [s.id, s.cached])).toEqual([
      ['backgrounds', 3],
      ['icon', 0],
      ['manifest', 0],
    ]);
    writeFileSync(blob, kept);
    // One colour changed: that background is to be made, so the run checks the key and the balance first.
    const changed = await build(['--set', 'palette=["forest green","sand","plum"]']);
    expect(changed.submitted).toBe(1);
    expect(gateway.stats().requests.by_route['GET /api/v1/apikey/validate']).toBeGreaterThan(0);
  });

  it("keeps each gateway's entries apart: what --local made is never served to a run on another gateway", async () => {
    // Offline first, as a user builds a recipe for free: the built-in gateway's stand-in images.
    const offline = await asProcess(['run', recipe, '--local', '--json'], { PIPELINE_LOCAL_LATENCY_SCALE: '0.01' });
    expect(offline.exitCode, offline.stderr).toBe(0);
    // The cache holds them for a --local run, and for no other gateway.
    const counted = async (args: string[]) =>
      JSON.parse((await pipeline(['plan', recipe, '--json', ...args])).stdout).steps.map(
        (s: { id: string; cached: number }) => [s.id, s.cached],
      );
    expect(await counted(['--local'])).toEqual([
      ['backgrounds', 3],
      ['icon', 1],
      ['manifest', 0],
    ]);
    expect(await counted([])).toEqual([
      ['backgrounds', 0],
      ['icon', 0],
      ['manifest', 0],
    ]);
    // The run on the gateway makes every image itself, then its own entries serve its rerun.
    const real = await build();
    expect(real.result.exitCode, real.result.stderr).toBe(0);
    expect(real.submitted).toBe(4);
    expect(cachedItems(real.report.run_id)).toEqual([]);
    const again = await build();
    expect(again.submitted).toBe(0);
    expect(cachedItems(again.report.run_id)).toEqual(['backgrounds[0]', 'backgrounds[1]', 'backgrounds[2]', 'icon[0]']);
  });

  it('reruns a changed for_each item and the steps that depend on it, and nothing else', async () => {
    await build(['--set', 'palette=["teal","sand","plum"]']);
    // The second item changes: only it reruns (the icon uses the first background).
    const second = await build(['--set', 'palette=["teal","grey","plum"]']);
    expect(second.result.exitCode, second.result.stderr).toBe(0);
    expect(second.submitted).toBe(1);
    expect(cachedItems(second.report.run_id)).toEqual(['backgrounds[0]', 'backgrounds[2]', 'icon[0]']);
    // The first item changes: it reruns, and so does the icon made from it.
    const first = await build(['--set', 'palette=["navy","grey","plum"]']);
    expect(first.submitted).toBe(2);
    expect(cachedItems(first.report.run_id)).toEqual(['backgrounds[1]', 'backgrounds[2]']);
  });

  it('reruns the dependents of a local file whose bytes changed', async () => {
    await build();
    const logo = join(work, 'recipes', 'assets', 'logo.png');
    const png = new PNG({ width: 256, height: 256 });
    png.data.fill(200);
    writeFileSync(logo, PNG.sync.write(png));
    const after = await build();
    expect(after.result.exitCode, after.result.stderr).toBe(0);
    expect(after.submitted).toBe(1);
    // The new logo, and the cached first background: its URL is from an earlier run.
    expect(after.made['POST /api/v1/media/files']).toBe(2);
    expect(cachedItems(after.report.run_id)).toEqual(['backgrounds[0]', 'backgrounds[1]', 'backgrounds[2]']);
  });

  it('submits two items with the same key once', async () => {
    const run = await build(['--set', 'palette=["teal","teal"]']);
    expect(run.result.exitCode, run.result.stderr).toBe(0);
    expect(run.submitted).toBe(2); // one background, one icon
    expect(run.report.outputs.backgrounds).toHaveLength(2);
    // Each item has a file of its own, under its own name, with the same bytes: a step that edits one
    // in place leaves the other alone. The item served by its twin saved a task.
    const paths = run.report.outputs.backgrounds.map((b: { path: string }) => b.path);
    expect(new Set(paths).size).toBe(2);
    expect(readFileSync(paths[1]).equals(readFileSync(paths[0]))).toBe(true);
    expect(run.report.cache).toMatchObject({ hits: 1, tasks_saved: 1 });
    // Both files are the run's outputs: in its file list, as runs show and the report have them.
    for (const path of paths) expect(run.report.files).toContain(path);
  });

  it('list, prune and clear of a cache folder that does not exist say so, and make no folder', async () => {
    const missing = join(tmpdir(), `no-cache-here-${process.pid}`);
    expect((await pipeline(['cache', 'list', '--cache-dir', missing])).stdout).toBe(`no entries in ${missing}`);
    expect((await pipeline(['cache', 'prune', '--older-than', '1d', '--cache-dir', missing])).exitCode).toBe(0);
    expect((await pipeline(['cache', 'clear', '--cache-dir', missing])).stdout).toBe('removed 0 entries');
    expect(existsSync(missing)).toBe(false);
  });

  it('--no-cache neither reads nor writes; --refresh writes without reading', async () => {
    const uncached = await build(['--no-cache']);
    expect(uncached.submitted).toBe(4);
    expect(uncached.report.cache.enabled).toBe(false);
    expect((await build(['--no-cache'])).submitted).toBe(4);
    const listed = async () => JSON.parse((await pipeline(['cache', 'list', '--json'])).stdout).entries;
    expect(await listed()).toEqual([]);
    await build();
    const stored = (await listed()).map((e: { created_at: number }) => e.created_at);
    const refreshed = await build(['--refresh']);
    expect(refreshed.submitted).toBe(4);
    // Each refreshed item was stored again (a new icon from a new background is a new entry).
    const restored = (await listed()).map((e: { created_at: number }) => e.created_at);
    expect(restored.filter((t: number) => t > Math.max(...stored))).toHaveLength(4);
    expect((await build()).submitted).toBe(0);
  });

  it('two runs at once sharing one cache folder both succeed and leave valid entries', async () => {
    const shared = { PIPELINE_CACHE_DIR: join(work, 'shared-cache') };
    // Two processes: two runs truly at once, each writing the folder while the other reads it; they
    // run on real time, so against a gateway of their own on real time too.
    const onManualClock = gateway;
    gateway = await startLocalGateway({ latencyScale: 0.01, latencyJitter: 0, seed: 9 });
    const [a, b] = await Promise.all([build([], shared, asProcess), build([], shared, asProcess)]);
    expect(a.result.exitCode, a.result.stderr).toBe(0);
    expect(b.result.exitCode, b.result.stderr).toBe(0);
    const listed = await pipeline(['cache', 'list', '--json'], shared);
    expect(listed.stderr).toBe('');
    // Three backgrounds, and an icon for each first background the two runs made.
    expect(JSON.parse(listed.stdout).entries.length).toBeGreaterThanOrEqual(4);
    // A third run on the same gateway (entries are kept by gateway) is served whole.
    const third = await build([], shared, asProcess);
    await gateway.close();
    gateway = onManualClock;
    expect(third.made).toEqual({});
    expect(third.result.stderr).not.toMatch(/unusable|could not store/);
  });

  it('treats a truncated entry as a miss with one warning, and reruns only that item', async () => {
    const cacheDir = join(work, 'cache');
    await build(['--cache-dir', cacheDir]);
    const entries = JSON.parse((await pipeline(['cache', 'list', '--json', '--cache-dir', cacheDir])).stdout).entries;
    const icon = entries.find((e: { action: string }) => e.action.includes('edit')).key as string;
    const path = join(cacheDir, 'entries', icon.slice(0, 2), `${icon}.json`);
    truncateSync(path, 40);
    // plan and cache list run nothing: each says the entry counts as not cached, once.
    for (const args of [
      ['plan', recipe],
      ['cache', 'list'],
    ]) {
      const read = await pipeline([...args, '--cache-dir', cacheDir]);
      expect(
        read.stderr.match(
          /is unusable \(it is not whole JSON.*\); it counts as not cached, and a run makes its step again/g,
        ),
        args[0],
      ).toHaveLength(1);
      expect(read.stderr).not.toContain('running the step');
    }
    const after = await build(['--cache-dir', cacheDir]);
    expect(after.result.exitCode, after.result.stderr).toBe(0);
    expect(after.submitted).toBe(1);
    expect(after.result.stderr.match(/cache entry \w+ is unusable \(it is not whole JSON/g)).toHaveLength(1);
    // The rerun stored a whole entry again.
    expect((await build(['--cache-dir', cacheDir])).made).toEqual({});
  });

  it('warns once of a damaged entry of a step whose input is known before the run', async () => {
    const cacheDir = join(work, 'cache');
    await build(['--cache-dir', cacheDir]);
    const entries = JSON.parse((await pipeline(['cache', 'list', '--json', '--cache-dir', cacheDir])).stdout).entries;
    const background = entries.find((e: { action: string }) => e.action.includes('t2i')).key as string;
    // Edited into other valid JSON: the digest no longer matches, so it is a miss, not a hit with edited values.
    const path = join(cacheDir, 'entries', background.slice(0, 2), `${background}.json`);
    const entry = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...entry, outputs: { images: [] } }));
    const after = await build(['--cache-dir', cacheDir]);
    expect(after.result.exitCode, after.result.stderr).toBe(0);
    expect(after.submitted).toBeGreaterThanOrEqual(1);
    const said = `${after.result.stdout}\n${after.result.stderr}`;
    expect(said.match(/cache entry \w+ is unusable \(its content does not match its digest/g)).toHaveLength(1);
  });

  it("gives every run outputs of its own: editing one run's file changes no other run and no cache entry", async () => {
    const cacheDir = join(work, 'cache');
    const runs = [];
    for (let n = 0; n < 3; n++) runs.push((await build(['--cache-dir', cacheDir])).report);
    const icons = runs.map((report) => join(report.outputs_dir, 'icon.png'));
    const blobsDir = join(cacheDir, 'blobs');
    const blobs = readdirSync(blobsDir).flatMap((shard) =>
      readdirSync(join(blobsDir, shard)).map((name) => join(blobsDir, shard, name)),
    );
    const inodes = [...icons, ...blobs].map((path) => statSync(path).ino);
    expect(new Set(inodes).size).toBe(inodes.length);
    const before = readFileSync(icons[1]!);
    appendFileSync(icons[2]!, 'x');
    expect(readFileSync(icons[1]!)).toEqual(before);
    const next = await build(['--cache-dir', cacheDir]);
    expect(next.result.stderr).not.toMatch(/damaged/);
    expect(next.made).toEqual({});
    expect(readFileSync(join(next.report.outputs_dir, 'icon.png'))).toEqual(before);
  });

  it('an unwritable cache folder is one message, and the run goes on uncached', async () => {
    const blocked = join(work, 'not-a-folder');
    writeFileSync(blocked, '');
    const run = await build(['--cache-dir', join(blocked, 'cache')]);
    expect(run.result.exitCode, run.result.stderr).toBe(0);
    expect(run.submitted).toBe(4);
    expect(run.result.stderr.match(/cannot write to the cache folder/g)).toHaveLength(1);
    expect(run.result.stderr).toMatch(/running without the step cache/);
  });

  it('pipeline plan counts the runs the cache holds for steps whose input is known before the run', async () => {
    await build(['--set', 'palette=["teal","sand"]']);
    const planned = await pipeline(['plan', recipe, '--set', 'palette=["teal","sand","plum"]', '--format', 'json']);
    expect(planned.exitCode, planned.stderr).toBe(0);
    const estimate = JSON.parse(planned.stdout);
    expect(estimate.steps.map((s: { id: string; cached: number }) => [s.id, s.cached])).toEqual([
      ['backgrounds', 2],
      ['icon', 0],
      ['manifest', 0],
    ]);
    expect(estimate.totals.cached).toBe(2);
    // One background and the icon are left to make: two submissions.
    expect(estimate.totals.requests.submissions).toBe(2);
    expect(estimate.totals.tasks['vendor-a/vendor-a-v3-t2i']).toBe(1);
    const uncached = JSON.parse((await pipeline(['plan', recipe, '--no-cache', '--format', 'json'])).stdout);
    expect(uncached.totals.cached).toBe(0);
  });

  it('plan counts the items of a chain the cache holds, item by item, and --max-cost lets the rerun of one changed item go', async () => {
    const chain = join(work, 'chain.yaml');
    writeFileSync(
      chain,
      [
        'version: 1',
        'name: chain',
        'inputs:',
        '  colours: { type: array, default: [red, green, blue] }',
        'steps:',
        '  bg: { uses: vendor-a/vendor-a-v3-t2i, for_each: "${{ inputs.colours }}", with: { prompt: "a ${{ item }} sky" } }',
        '  badge:',
        '    uses: vendor-b/vendor-b-5.0-lite-edit',
        '    for_each: ${{ steps.bg.outputs[*].images[0].url }}',
        '    with: { prompt: add a badge, image: ["${{ item }}"], size: 1024x1024 }',
        '',
      ].join('\n'),
    );
    const first = await pipeline(['run', chain, '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const changed = ['--set', 'colours=["red","grey","blue"]'];
    const planned = await pipeline(['plan', chain, ...changed, '--format', 'json']);
    expect(planned.exitCode, planned.stderr).toBe(0);
    const estimate = JSON.parse(planned.stdout);
    // badge[0] and badge[2] follow bg[0] and bg[2], which the cache holds: they are known too.
    expect(estimate.steps.map((s: { id: string; cached: number }) => [s.id, s.cached])).toEqual([
      ['bg', 2],
      ['badge', 2],
    ]);
    expect(estimate.totals.requests.submissions).toBe(2);
    // The rerun costs what plan says, so a cap of just that lets it go.
    const cap = String(estimate.totals.cost.usd);
    const before = gateway.stats().requests.by_route[SUBMIT] ?? 0;
    const rerun = await pipeline(['run', chain, ...changed, '--max-cost', cap, '--json']);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect((gateway.stats().requests.by_route[SUBMIT] ?? 0) - before).toBe(2);
  });

  it('lists, prunes and clears the cache, each with --json', async () => {
    await build();
    const listed = JSON.parse((await pipeline(['cache', 'list', '--json'])).stdout);
    expect(listed.entries.map((e: { action: string }) => e.action).sort()).toEqual([
      'model vendor-a/vendor-a-v3-t2i',
      'model vendor-a/vendor-a-v3-t2i',
      'model vendor-a/vendor-a-v3-t2i',
      'model vendor-b/vendor-b-5.0-lite-edit',
    ]);
    const kept = JSON.parse((await pipeline(['cache', 'prune', '--older-than', '30d', '--json'])).stdout);
    expect(kept.removed).toEqual({ entries: 0, blobs: 0, bytes: 0 });
    expect(JSON.parse((await pipeline(['cache', 'clear', '--json'])).stdout).removed).toEqual({ entries: 4 });
    expect(JSON.parse((await pipeline(['cache', 'list', '--json'])).stdout).entries).toEqual([]);
    expect((await build()).submitted).toBe(4);
  });
});
