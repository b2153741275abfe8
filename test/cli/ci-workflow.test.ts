// recipes/ci-assets.workflow.yml run as GitHub would run it, step by step, on fresh checkouts:
// cold, then again with the step cache actions/cache saved, then after a recipe change, then a
// job that fails half-way and the one after it.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { type CacheStore, type JobResult, runJob, type WorkflowJob } from '../support/workflow-runner.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const workflow = parse(readFileSync(join(repo, 'recipes', 'ci-assets.workflow.yml'), 'utf8'));
const job: WorkflowJob = workflow.jobs.build;

/** The reads a run makes before it starts (the key and the balance): no work a cache could save. */
const PREFLIGHT = ['GET /api/v1/apikey/validate', 'GET /api/v1/team/balance'];
const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway;
let work: string;
let cache: CacheStore;
let path: string;
const tracked = trackedFiles(['recipes', 'schemas', 'package.json', 'package-lock.json']);

/** What a checkout holds of `paths`: git's list, or in a copy without git, the files minus .gitignore's. */
function trackedFiles(paths: string[]): string[] {
  const listed = spawnSync('git', ['ls-files', '-z', ...paths], { cwd: repo, encoding: 'utf8' });
  if (listed.status === 0 && listed.stdout) return listed.stdout.split('\0').filter(Boolean);
  const onDisk = paths.flatMap((path) =>
    statSync(join(repo, path)).isDirectory()
      ? readdirSync(join(repo, path), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => relative(repo, join(e.parentPath, e.name)))
      : [path],
  );
  return onDisk.filter((file) => !/(^|\/)\.pipeline\/|\.log$/.test(file));
}

beforeAll(async () => {
  gateway = await startLocalGateway({ latencyScale: 0.01, latencyJitter: 0, seed: 11 });
  work = await mkdtemp(join(tmpdir(), 'pipeline-ci-workflow-'));
  cache = { root: join(work, 'cache-store'), entries: [] };
  // After `npm ci`, `npx pipeline` in this repository runs its own bin (package.json), built by the
  // `prepare` script. The test has no network for npm: this shim runs the repository's build instead.
  const bin = join(work, 'bin');
  mkdirSync(bin);
  const main = join(repo, 'dist', 'cli', 'main.js');
  const shim = [
    '#!/bin/sh',
    '[ "$1" = pipeline ] || { echo "npx stand-in: only npx pipeline is expected, got: $*" >&2; exit 127; }',
    'shift',
    `exec "${process.execPath}" "${main}" "$@"`,
  ];
  writeFileSync(join(bin, 'npx'), `${shim.join('\n')}\n`);
  chmodSync(join(bin, 'npx'), 0o755);
  path = [bin, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
});
afterAll(async () => {
  await gateway?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A fresh checkout: the tracked files, and the repository's node_modules in place of `npm ci`. */
const checkout = (edit?: (workspace: string) => void) => (workspace: string) => {
  for (const file of tracked) cpSync(join(repo, file), join(workspace, file), { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(workspace, 'node_modules'));
  edit?.(workspace);
};

/** Runs the job on a new machine, and counts the gateway requests it made by route (without the preflight). */
async function runOnNewMachine(name: string, edit?: (workspace: string) => void) {
  const before = gateway.stats().requests.by_route;
  const secrets = { PIPELINE_API_KEY: gateway.apiKey, PIPELINE_BASE_URL: gateway.baseUrl };
  const result = await runJob(job, { root: join(work, name), checkout: checkout(edit), secrets, cache, path });
  await gateway.settle();
  const made: Record<string, number> = {};
  for (const [route, count] of Object.entries(gateway.stats().requests.by_route))
    if (count !== (before[route] ?? 0)) made[route] = count - (before[route] ?? 0);
  for (const route of PREFLIGHT) if (made[route] === 1) delete made[route];
  const total = Object.values(made).reduce((a, b) => a + b, 0);
  return { result, made, total };
}

/** Every step ran and exited 0, except the one that runs only after a failure. */
function expectEveryStepSucceeded(result: JobResult) {
  expect(result.steps.map((s) => s.label)).toHaveLength(job.steps.length);
  for (const [index, step] of result.steps.entries()) {
    const expected = job.steps[index]!.if === 'failure()' ? 'skipped' : 0;
    expect(step.exitCode, `${step.label}:\n${step.output}`).toBe(expected);
  }
}
const exitCodes = (result: JobResult) => Object.fromEntries(result.steps.map((s) => [s.label, s.exitCode]));

/** Every file under `dir`, by path relative to it, with its bytes. */
function filesUnder(dir: string): Record<string, string> {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  const pairs = entries.map((e) => join(e.parentPath, e.name)).map((p) => [relative(dir, p), readFileSync(p)]);
  return Object.fromEntries(pairs.sort().map(([p, bytes]) => [p, bytes!.toString('base64')]));
}

const outputOf = (result: JobResult, label: string) => result.steps.find((s) => s.label.startsWith(label))!.output;
const assetsOf = (result: JobResult) => join(result.workspace, 'build', 'assets');
const manifestOf = (result: JobResult) => JSON.parse(readFileSync(join(assetsOf(result), 'manifest.json'), 'utf8'));
let cold: Awaited<ReturnType<typeof runOnNewMachine>>;

describe('recipes/ci-assets.workflow.yml on fresh checkouts (each test builds on the one before)', () => {
  it('a cold job succeeds at every step and leaves the outputs, their manifest and a summary', async () => {
    // One job: a second one would run here untested.
    expect(Object.keys(workflow.jobs)).toEqual(['build']);
    // The run's folder (under the workspace) has a comma and spaces in its path: nothing may split on them.
    cold = await runOnNewMachine('cold, in a folder with a comma');
    const { result } = cold;
    expectEveryStepSucceeded(result);
    expect(result.cache).toBe('miss');
    const report = JSON.parse(readFileSync(join(result.workspace, 'build', 'assets.json'), 'utf8'));
    expect(report.status).toBe('succeeded');
    expect(report.outputs.backgrounds).toHaveLength(3);
    const files = Object.keys(filesUnder(assetsOf(result)));
    expect(files).toEqual(['backgrounds-1.png', 'backgrounds-2.png', 'backgrounds-3.png', 'icon.png', 'manifest.json']);
    // `copied` names the files as `--out` was given: relative to the step's folder, the workspace.
    expect([...report.copied].sort()).toEqual(files.map((f) => `build/assets/${f}`));
    // The manifest lists the assets, as `--out` lays them out, leaving out only itself.
    expect(manifestOf(result)).toEqual(files.filter((f) => f !== 'manifest.json'));
    expect(report.outputs.manifest).toEqual(manifestOf(result));
    expect(outputOf(result, 'npx pipeline validate')).toMatch(/valid: 3 steps/);
    expect(outputOf(result, 'npx pipeline validate')).not.toMatch(/^::(error|warning)/m);
    expect(result.summary).toMatch(/^\| Step \| Status \| Ran \| Cached \|/m);
    expect(result.summary).toMatch(/^\| backgrounds \| succeeded \| 3 \| 0 \|/m);
    expect(result.artifacts.assets).toBe(join(result.workspace, 'build'));
    expect(cold.made[SUBMIT]).toBe(4);
    expect(cache.entries.map((e) => e.key)).toEqual([expect.stringMatching(/^pipeline-steps-[0-9a-f]{64}$/)]);
    const everything = [...result.steps.map((s) => s.output), result.summary, JSON.stringify(report)].join('\n');
    expect(everything).not.toContain(gateway.apiKey);
  });

  it('a second job with the saved cache makes no request of the gateway and the same files', async () => {
    const warm = await runOnNewMachine('warm');
    expectEveryStepSucceeded(warm.result);
    expect(warm.result.cache).toBe('exact');
    expect(warm.made).toEqual({});
    expect(filesUnder(assetsOf(warm.result))).toEqual(filesUnder(assetsOf(cold.result)));
    expect(outputOf(warm.result, 'Build the assets')).toContain('⚡ backgrounds[2] cached');
    expect(warm.result.summary).toMatch(/^\| backgrounds \| succeeded \| 0 \| 3 \|/m);
    // An exact hit saves nothing new, as actions/cache does.
    expect(cache.entries).toHaveLength(1);
  });

  it('after one palette colour changes, a job restores the older cache and makes only that background', async () => {
    const recolour = (workspace: string) => {
      const recipe = join(workspace, 'recipes', 'ci-assets.yaml');
      const text = readFileSync(recipe, 'utf8');
      expect(text).toContain('"signal orange"');
      writeFileSync(recipe, text.replace('"signal orange"', '"signal red"'));
    };
    const changed = await runOnNewMachine('changed', recolour);
    expectEveryStepSucceeded(changed.result);
    expect(changed.result.cache).toBe('restored');
    expect(changed.made[SUBMIT]).toBe(1);
    expect(changed.result.summary).toMatch(/^\| backgrounds \| succeeded \| 1 \| 2 \|/m);
    expect(changed.total).toBeGreaterThan(0);
    expect(changed.total).toBeLessThan(cold.total);
    const before = filesUnder(assetsOf(cold.result));
    const after = filesUnder(assetsOf(changed.result));
    expect(Object.keys(after)).toEqual(Object.keys(before));
    const differing = Object.keys(after).filter((file) => after[file] !== before[file]);
    expect(differing).toEqual(['backgrounds-3.png']);
    expect(cache.entries).toHaveLength(2);
    expect(cache.entries[1]!.key).not.toBe(cache.entries[0]!.key);
  });

  it('a job that fails keeps what it paid for: the next job makes only what failed', async () => {
    const twoMore = (workspace: string) => {
      const recipe = join(workspace, 'recipes', 'ci-assets.yaml');
      writeFileSync(
        recipe,
        readFileSync(recipe, 'utf8').replace('"signal orange"]', '"signal orange", "plum", "teal"]'),
      );
    };
    // One of the two new backgrounds is refused (402, never retried): the build fails.
    gateway.injectFault({ kind: 'status', status: 402, route: SUBMIT, times: 1 });
    const failed = await runOnNewMachine('failed', twoMore);
    expect(failed.made[SUBMIT]).toBe(2);
    expect(exitCodes(failed.result)).toMatchObject({
      'Build the assets': 1,
      'Keep what a failed build paid for (actions/cache saves only after a job that succeeds)': 0,
      'Drop entries stored more than 30 days ago (a later build stores again what it needs)': 0,
      'actions/upload-artifact@v4': 'skipped',
    });
    expect(cache.entries.map((e) => e.key)).toHaveLength(3);
    expect(cache.entries[2]!.key).toMatch(/^pipeline-steps-failed-\d+-1$/);
    const next = await runOnNewMachine('after the failure', twoMore);
    expectEveryStepSucceeded(next.result);
    expect(next.result.cache).toBe('restored');
    // Only the refused background: the other new one is in the cache the failed job saved.
    expect(next.made[SUBMIT]).toBe(1);
    expect(next.result.summary).toMatch(/^\| backgrounds \| succeeded \| 1 \| 4 \|/m);
    expect(manifestOf(next.result)).toHaveLength(6);
  });
});
