// recipes/ci-assets.workflow.yml run as GitHub would run it, step by step, on fresh checkouts,
// through this repository's own action (`uses: ./`, action.yml): cold, then again with the step
// cache the action saved, then after a recipe change, then a job that fails half-way and the one
// after it.
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import {
  ACTION_FILES,
  copyTracked,
  countingRequests,
  filesUnder,
  npmCiRuns,
  repo,
  SUBMIT,
  toolShims,
  trackedFiles,
} from '../support/action-checkout.js';
import { type CacheStore, type JobResult, runJob, type WorkflowJob } from '../support/workflow-runner.js';

const workflow = parse(readFileSync(join(repo, 'recipes', 'ci-assets.workflow.yml'), 'utf8'));
const job: WorkflowJob = workflow.jobs.build;

let gateway: LocalGateway;
let work: string;
let cache: CacheStore;
let path: string;
let npmLog: string;
const tracked = trackedFiles([...ACTION_FILES, 'recipes']);
const stepCaches = () => cache.entries.filter((e) => e.key.startsWith('pipeline-steps-'));

beforeAll(async () => {
  gateway = await startLocalGateway({ latencyScale: 0.01, latencyJitter: 0, seed: 11 });
  work = await mkdtemp(join(tmpdir(), 'pipeline-ci-workflow-'));
  cache = { root: join(work, 'cache-store'), entries: [] };
  npmLog = join(work, 'npm-ci.log');
  path = toolShims(join(work, 'bin'), npmLog);
});
afterAll(async () => {
  await gateway?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A fresh checkout: the tracked files (no node_modules, no dist: the action installs those). */
const checkout = (edit?: (workspace: string) => void) => (workspace: string) => {
  copyTracked(tracked, workspace);
  edit?.(workspace);
};

/** Runs the job on a new machine, and counts the gateway requests it made by route (without the preflight). */
function runOnNewMachine(name: string, edit?: (workspace: string) => void) {
  const secrets = { PIPELINE_API_KEY: gateway.apiKey };
  const vars = { PIPELINE_BASE_URL: gateway.baseUrl };
  return countingRequests(gateway, () =>
    runJob(job, { root: join(work, name), checkout: checkout(edit), secrets, vars, cache, path }),
  );
}

/** Every step of the job ran and exited 0, and in the action every step but the one that runs only after a failure. */
function expectEveryStepSucceeded(result: JobResult) {
  expect(result.steps.map((s) => s.label)).toHaveLength(job.steps.length);
  for (const step of result.steps) expect(step.exitCode, `${step.label}:\n${step.output}`).toBe(0);
  const inAction = Object.fromEntries(actionStep(result).steps!.map((s) => [s.label, s.exitCode]));
  expect(inAction).toMatchObject({ 'Run the recipe': 0, 'Keep what a failed or cancelled run paid for': 'skipped' });
}
const exitCodes = (result: JobResult) => Object.fromEntries(result.steps.map((s) => [s.label, s.exitCode]));
const actionStep = (result: JobResult) => result.steps.find((s) => s.label === 'Build the assets')!;
const innerExitCodes = (result: JobResult) =>
  Object.fromEntries(actionStep(result).steps!.map((s) => [s.label, s.exitCode]));

const assetsOf = (result: JobResult) => join(result.workspace, 'build', 'assets');
const manifestOf = (result: JobResult) => JSON.parse(readFileSync(join(assetsOf(result), 'manifest.json'), 'utf8'));
/** The run's run.json, found through the action's outputs-dir output. */
const runJsonOf = (result: JobResult) =>
  JSON.parse(readFileSync(join(result.outputs.assets!['outputs-dir']!, '..', 'run.json'), 'utf8'));
const STEP_KEY = /^pipeline-steps-Linux-[0-9a-f]{12}-[0-9a-f]{64}$/;
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
    const outputs = result.outputs.assets!;
    expect(outputs.status).toBe('succeeded');
    expect(outputs['run-id']).toMatch(/^\d{8}-\d{6}-ci-assets-/);
    expect(Number(outputs['spend-usd'])).toBeGreaterThan(0);
    expect(outputs.report).toBe(join(outputs['outputs-dir']!, '..', 'report.html'));
    // The outputs and the report in one artifact, as the job summary names it.
    expect(result.artifacts['pipeline-ci-assets']).toEqual([outputs['outputs-dir'], outputs.report]);
    expect(result.summary).toContain('**Artifact:** `pipeline-ci-assets` holds the outputs and report.html');
    // With --out, the summary lists the files copied there, where the job's own upload finds them.
    expect(result.summary).toContain('### Outputs in `build/assets/`');
    const report = runJsonOf(result);
    expect(report.status).toBe('succeeded');
    expect(report.outputs.backgrounds).toHaveLength(3);
    const files = Object.keys(filesUnder(assetsOf(result)));
    expect(files).toEqual(['backgrounds-1.png', 'backgrounds-2.png', 'backgrounds-3.png', 'icon.png', 'manifest.json']);
    // The manifest lists the assets, as `--out` lays them out, leaving out only itself.
    expect(manifestOf(result)).toEqual(files.filter((f) => f !== 'manifest.json'));
    expect(report.outputs.manifest).toEqual(manifestOf(result));
    expect(actionStep(result).output).not.toMatch(/^::(error|warning)/m);
    expect(result.summary).toMatch(/^\| Step \| Status \| Ran \| Cached \|/m);
    expect(result.summary).toMatch(/^\| backgrounds \| succeeded \| 3 \| 0 \|/m);
    expect(result.artifacts.assets).toEqual([join(result.workspace, 'build')]);
    expect(cold.made[SUBMIT]).toBe(4);
    expect(stepCaches().map((e) => e.key)).toEqual([expect.stringMatching(STEP_KEY)]);
    // The action installed the tool in its own folder (here the workspace: `uses: ./`), once.
    expect(npmCiRuns(npmLog)).toEqual([result.workspace]);
    expect(result.steps.at(-2)!.output).toMatch(/^run \S+-ci-assets-\S+ succeeded, spent \d/m);
    const everything = [...result.steps.map((s) => s.output), result.summary, JSON.stringify(report)].join('\n');
    expect(everything).not.toContain(gateway.apiKey);
  });

  it('a second job with the saved cache makes no request of the gateway and the same files', async () => {
    const warm = await runOnNewMachine('warm');
    expectEveryStepSucceeded(warm.result);
    expect(warm.result.cache).toBe('exact');
    expect(warm.made).toEqual({});
    expect(filesUnder(assetsOf(warm.result))).toEqual(filesUnder(assetsOf(cold.result)));
    expect(actionStep(warm.result).output).toContain('⚡ backgrounds[2] cached');
    expect(warm.result.summary).toMatch(/^\| backgrounds \| succeeded \| 0 \| 3 \|/m);
    expect(warm.result.outputs.assets!['spend-usd']).toBe('0');
    // An exact hit saves nothing new, as actions/cache does; the tool's install came from its cache.
    expect(stepCaches()).toHaveLength(1);
    expect(innerExitCodes(warm.result)).toMatchObject({
      "Install and build the tool from the action's checkout": 'skipped',
      'Save the step cache': 'skipped',
    });
    expect(npmCiRuns(npmLog)).toHaveLength(1);
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
    expect(stepCaches()).toHaveLength(2);
    expect(stepCaches()[1]!.key).not.toBe(stepCaches()[0]!.key);
  });

  it('a job that fails keeps what it paid for: the next job makes only what failed', async () => {
    const twoMore = (workspace: string) => {
      const recipe = join(workspace, 'recipes', 'ci-assets.yaml');
      writeFileSync(
        recipe,
        readFileSync(recipe, 'utf8').replace('"signal orange"]', '"signal orange", "plum", "teal"]'),
      );
    };
    // One of the two new backgrounds is refused (402, never retried): the build stops.
    gateway.injectFault({ kind: 'status', status: 402, route: SUBMIT, times: 1 });
    const failed = await runOnNewMachine('failed', twoMore);
    expect(failed.made[SUBMIT]).toBe(2);
    expect(exitCodes(failed.result)).toMatchObject({
      'Build the assets': 1,
      'Say what the build made and spent': 0,
      'actions/upload-artifact@v4': 'skipped',
    });
    expect(innerExitCodes(failed.result)).toMatchObject({
      // A 402 stops the run for money: exit 3.
      'Run the recipe': 3,
      'Upload the outputs and report.html': 0,
      'Drop step-cache entries not stored or used for longer than prune-older-than': 0,
      'Save the step cache': 'skipped',
      'Keep what a failed or cancelled run paid for': 0,
    });
    expect(failed.result.outputs.assets!.status).toBe('stopped');
    // The resume command it prints cannot be followed from a later job: it says to re-run the job.
    const ran = actionStep(failed.result).steps!.find((s) => s.label === 'Run the recipe')!;
    expect(ran.output).toContain("In a CI job the run's journal goes with the runner: re-run the job instead");
    // The report of a failed run is uploaded too.
    expect(failed.result.artifacts['pipeline-ci-assets']).toHaveLength(2);
    expect(stepCaches().map((e) => e.key)).toHaveLength(3);
    expect(stepCaches()[2]!.key).toMatch(/^pipeline-steps-Linux-[0-9a-f]{12}-failed-\d+-1$/);
    const next = await runOnNewMachine('after the failure', twoMore);
    expectEveryStepSucceeded(next.result);
    expect(next.result.cache).toBe('restored');
    // Only the refused background: the other new one is in the cache the failed job saved.
    expect(next.made[SUBMIT]).toBe(1);
    expect(next.result.summary).toMatch(/^\| backgrounds \| succeeded \| 1 \| 4 \|/m);
    expect(manifestOf(next.result)).toHaveLength(6);
  });
});
