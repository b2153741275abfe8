// The GitHub Action as another repository uses it: test/fixtures/consumer-repo has a recipe, an
// asset and a workflow with `uses: media-pipeline/media-pipeline@v1`, and no package.json at all.
// The action installs the tool from its own checkout. Cold, warm (no model request: the step cache
// the cold job saved answers), then one recipe change (only that item is made again).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
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

const fixture = join(repo, 'test', 'fixtures', 'consumer-repo');
const job: WorkflowJob = parse(readFileSync(join(fixture, '.github', 'workflows', 'art.yml'), 'utf8')).jobs.build;
const actionFiles = trackedFiles(ACTION_FILES);

let gateway: LocalGateway;
let work: string;
let cache: CacheStore;
let path: string;
let npmLog: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ latencyScale: 0.01, latencyJitter: 0, seed: 21 });
  work = await mkdtemp(join(tmpdir(), 'pipeline-action-consumer-'));
  cache = { root: join(work, 'cache-store'), entries: [] };
  npmLog = join(work, 'npm-ci.log');
  path = toolShims(join(work, 'bin'), npmLog);
});
afterAll(async () => {
  await gateway?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

function runOnNewMachine(name: string, edit?: (workspace: string) => void) {
  const checkout = (workspace: string) => {
    cpSync(fixture, workspace, { recursive: true });
    edit?.(workspace);
  };
  // The action is downloaded by its owner/name; its files are this repository's, as a tag of it holds them.
  const actions = { 'media-pipeline/media-pipeline': (dir: string) => copyTracked(actionFiles, dir) };
  const secrets = { PIPELINE_API_KEY: gateway.apiKey };
  const vars = { PIPELINE_BASE_URL: gateway.baseUrl };
  return countingRequests(gateway, () =>
    runJob(job, { root: join(work, name), checkout, secrets, vars, cache, path, actions }),
  );
}

/** A PNG of one colour: a logo with other bytes. */
function solidPng(size: number, [r, g, b]: [number, number, number]): Buffer {
  const png = new PNG({ width: size, height: size });
  for (let i = 0; i < png.data.length; i += 4) png.data.set([r, g, b, 255], i);
  return PNG.sync.write(png);
}

const art = (result: JobResult) => result.outputs.art!;
const stepCaches = () => cache.entries.filter((e) => e.key.startsWith('pipeline-steps-'));
const allText = (result: JobResult) =>
  [...result.steps.flatMap((s) => [s.output, ...(s.steps ?? []).map((inner) => inner.output)]), result.summary].join(
    '\n',
  );
let cold: Awaited<ReturnType<typeof runOnNewMachine>>;

describe('the action in a repository without package.json (each test builds on the one before)', () => {
  it('a cold job installs the tool, runs the recipe, uploads outputs and report, and saves the step cache', async () => {
    cold = await runOnNewMachine('cold');
    const { result } = cold;
    expect(existsSync(join(result.workspace, 'package.json'))).toBe(false);
    for (const step of result.steps) expect(step.exitCode, `${step.label}:\n${step.output}`).toBe(0);
    expect(art(result).status).toBe('succeeded');
    expect(Number(art(result)['spend-usd'])).toBeGreaterThan(0);
    // Three tiles and the badge; the logo went up once.
    expect(cold.made[SUBMIT]).toBe(4);
    const outputsDir = art(result)['outputs-dir']!;
    expect(Object.keys(filesUnder(outputsDir))).toEqual(['badge.png', 'tiles-1.png', 'tiles-2.png', 'tiles-3.png']);
    expect(result.artifacts['pipeline-game-art']).toEqual([outputsDir, art(result).report]);
    expect(readFileSync(art(result).report!, 'utf8')).toContain('<html');
    // npm ci ran in the action's own folder, not in the workspace.
    expect(npmCiRuns(npmLog)).toEqual([join(work, 'cold', '_actions', 'media-pipeline', 'media-pipeline')]);
    expect(result.restores.map((r) => r.outcome)).toEqual(['miss', 'miss']);
    expect(stepCaches()).toHaveLength(1);
    expect(result.steps.at(-1)!.output).toMatch(/^art succeeded, spent [\d.]+ USD, report at \/.*report\.html$/m);
    expect(allText(result)).not.toContain(gateway.apiKey);
  });

  it('a warm job makes no model request: everything comes from the restored step cache', async () => {
    const warm = await runOnNewMachine('warm');
    expect(warm.result.steps.map((s) => s.exitCode)).toEqual([0, 0, 0, 0]);
    expect(warm.made).toEqual({});
    expect(art(warm.result).status).toBe('succeeded');
    expect(art(warm.result)['spend-usd']).toBe('0');
    // Both the tool's install and the step cache were exact hits: no npm ci, no new cache.
    expect(warm.result.restores.map((r) => r.outcome)).toEqual(['exact', 'exact']);
    expect(npmCiRuns(npmLog)).toHaveLength(1);
    expect(stepCaches()).toHaveLength(1);
    expect(filesUnder(art(warm.result)['outputs-dir']!)).toEqual(filesUnder(art(cold.result)['outputs-dir']!));
    expect(warm.result.summary).toMatch(/^\| tiles \| succeeded \| 0 \| 3 \|/m);
  });

  it('after one tile changes in the recipe, only that tile is made again', async () => {
    const recipeChange = (workspace: string) => {
      const recipe = join(workspace, 'art', 'game-art.yaml');
      const text = readFileSync(recipe, 'utf8');
      expect(text).toContain('[grass, stone, water]');
      writeFileSync(recipe, text.replace('[grass, stone, water]', '[grass, sand, water]'));
    };
    const changed = await runOnNewMachine('changed', recipeChange);
    expect(changed.result.steps.map((s) => s.exitCode)).toEqual([0, 0, 0, 0]);
    expect(changed.made[SUBMIT]).toBe(1);
    expect(changed.result.restores.map((r) => r.outcome)).toEqual(['exact', 'restored']);
    const before = filesUnder(art(cold.result)['outputs-dir']!);
    const after = filesUnder(art(changed.result)['outputs-dir']!);
    expect(Object.keys(after).filter((file) => after[file] !== before[file])).toEqual(['tiles-2.png']);
    expect(changed.result.summary).toMatch(/^\| tiles \| succeeded \| 1 \| 2 \|/m);
    // A new key for the new recipe: the next job with it gets an exact hit.
    expect(stepCaches()).toHaveLength(2);
  });

  it('the cache key follows the local files the recipe reads, not every file beside it', async () => {
    // A new file the recipe does not read: the same key, an exact hit, no request.
    const unread = await runOnNewMachine('unread file', (workspace) =>
      writeFileSync(join(workspace, 'art', 'NOTES.md'), 'sketches for the next level\n'),
    );
    expect(unread.made).toEqual({});
    expect(unread.result.restores.map((r) => r.outcome)).toEqual(['exact', 'exact']);
    // The logo the badge reads: a new key; only the badge is made again, and the new cache is saved.
    const saved = stepCaches().length;
    const logo = await runOnNewMachine('new logo', (workspace) =>
      writeFileSync(join(workspace, 'art', 'logo.png'), solidPng(64, [200, 40, 40])),
    );
    expect(logo.result.restores.map((r) => r.outcome)).toEqual(['exact', 'restored']);
    expect(logo.made[SUBMIT]).toBe(1);
    expect(logo.result.summary).toMatch(/^\| badge \| succeeded \| 1 \| 0 \|/m);
    expect(stepCaches()).toHaveLength(saved + 1);
  });

  it('an invalid recipe fails the job with status invalid, its diagnostics in the summary, and nothing uploaded', async () => {
    const breakIt = (workspace: string) => {
      const recipe = join(workspace, 'art', 'game-art.yaml');
      writeFileSync(recipe, readFileSync(recipe, 'utf8').replace('concurrency: 3', 'concurrency: three'));
    };
    const invalid = await runOnNewMachine('invalid', breakIt);
    expect(invalid.total).toBe(0);
    expect(invalid.result.steps.map((s) => s.exitCode)).toEqual([0, 0, 1, 0]);
    expect(art(invalid.result)).toMatchObject({ status: 'invalid', 'run-id': '', 'spend-usd': '0', report: '' });
    expect(invalid.result.artifacts).toEqual({});
    expect(invalid.result.summary).toMatch(/^## ❌ art\/game-art\.yaml: not run \(exit 2\)$/m);
    expect(invalid.result.summary).toContain(
      'art/game-art.yaml:7:16: error: settings.concurrency must be a whole number, got "three"',
    );
    expect(invalid.result.steps.at(-1)!.output).toMatch(/^art invalid, spent 0 USD/m);
    // It paid nothing, so it keeps no cache of its own: GitHub's cache space is the repository's.
    const inAction = invalid.result.steps.find((s) => s.steps)!.steps!;
    expect(inAction.find((s) => s.label === 'Keep what a failed or cancelled run paid for')?.exitCode).toBe('skipped');
  });
});
