// The job summary (GITHUB_STEP_SUMMARY) tells the whole truth: the spend beside the estimate, the
// cache hits and the requests they saved, the artifact that holds the report, only outputs that
// really exist where it says, a summary for an invalid recipe too, and the 429s the run met (which
// the plain, non-terminal output shows as well).
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway;
/** The gateways' and the runs' time: polls, latencies and rate-limit waits take no real time. */
const clock = new ManualClock();
let work: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0.01, latencyJitter: 0, seed: 5 });
  work = await mkdtemp(join(tmpdir(), 'pipeline-job-summary-'));
  cpSync('recipes/ci-assets.yaml', join(work, 'recipes', 'ci-assets.yaml'));
  cpSync('recipes/assets', join(work, 'recipes', 'assets'), { recursive: true });
});
afterAll(async () => {
  await gateway.close();
  await rm(work, { recursive: true, force: true });
});
beforeEach(() => writeFileSync(summaryPath(), ''));

const summaryPath = () => join(work, 'summary.md');
const summary = () => readFileSync(summaryPath(), 'utf8');
/** The CLI as a GitHub step runs it: in the workspace, no terminal, CI=true. */
const pipeline = (args: string[], env: Record<string, string> = {}, on: LocalGateway = gateway) =>
  pipelineInProcess(args, {
    cwd: work,
    clock,
    gateway: on,
    env: {
      PATH: process.env.PATH,
      PIPELINE_HOME: join(work, '.pipeline'),
      PIPELINE_BASE_URL: gateway.baseUrl,
      PIPELINE_API_KEY: gateway.apiKey,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: work,
      GITHUB_STEP_SUMMARY: summaryPath(),
      ...env,
    },
  });
const runJsonOf = (stdout: string) => {
  const answer = JSON.parse(stdout);
  return JSON.parse(readFileSync(join(answer.run_dir, 'run.json'), 'utf8'));
};
/** The summary's "Outputs in `DIR`" section: its folder and the files it lists. */
function outputsSection(text: string): { dir: string; files: string[] } | undefined {
  const match = /^### Outputs in `([^`]+)`\n\n((?:- .*\n)+)/m.exec(text);
  if (!match) return undefined;
  const files = match[2]!
    .trim()
    .split('\n')
    .map((line) => line.replace(/^- `(.*)`$/, '$1'));
  return { dir: match[1]!, files };
}

describe('the job summary', () => {
  it('shows the spend beside the estimate, as the run ended with them', async () => {
    const run = await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache', '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const { cost } = runJsonOf(run.stdout);
    expect(cost.committed_usd).toBeGreaterThan(0);
    const usd = (n: number) => `$${n.toFixed(4)}`;
    expect(summary()).toContain(`**Spend:** ${usd(cost.committed_usd)} of an estimated ${usd(cost.estimated_usd)}`);
  });

  it('shows the step cache hits and the requests they saved', async () => {
    const cold = await pipeline(['run', 'recipes/ci-assets.yaml', '--json']);
    expect(cold.exitCode, cold.stderr).toBe(0);
    expect(summary()).toContain('**Step cache:** 0 hits');
    writeFileSync(summaryPath(), '');
    const warm = await pipeline(['run', 'recipes/ci-assets.yaml', '--json']);
    expect(warm.exitCode, warm.stderr).toBe(0);
    const { cache } = JSON.parse(warm.stdout);
    // Three backgrounds and the icon; the manifest's `run:` step is not cached.
    expect(cache.hits).toBe(4);
    expect(cache.requests_saved).toBeGreaterThan(0);
    expect(summary()).toContain(
      `**Step cache:** 4 hits, saving ${cache.requests_saved} requests and ${cache.tasks_saved} tasks`,
    );
    writeFileSync(summaryPath(), '');
    await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache']);
    expect(summary()).toContain('**Step cache:** off (--no-cache)');
  });

  it('counts the items a step skipped, for a failure upstream, in the table', async () => {
    writeFileSync(
      join(work, 'chain.yaml'),
      [
        'version: 1',
        'name: chain',
        'steps:',
        '  bg:',
        '    uses: vendor-a/vendor-a-v3-t2i',
        '    for_each: [red, green, blue]',
        '    continue_on_error: true',
        '    with: { prompt: "a ${{ item }} background" }',
        '  badge:',
        '    uses: vendor-b/vendor-b-5.0-lite-edit',
        '    for_each: ${{ steps.bg.outputs }}',
        '    with: { prompt: add a badge, image: ["${{ item.images[0].url }}"], size: 1024x1024 }',
        '',
      ].join('\n'),
    );
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT, body_contains: 'a green background', times: 1 });
    const run = await pipeline(['run', 'chain.yaml', '--no-cache']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary()).toMatch(/^\| Step \| Status \| Ran \| Cached \| Failed \| Skipped \| Tasks \|/m);
    expect(summary()).toMatch(/^\| badge \| succeeded \| 2 \| 0 \| 0 \| 1 \| 2 \|/m);
  });

  it('names the artifact that holds the outputs and the report, when the action says which', async () => {
    const run = await pipeline(['run', 'recipes/ci-assets.yaml'], { PIPELINE_REPORT_ARTIFACT: 'pipeline-ci-assets' });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary()).toContain('**Artifact:** `pipeline-ci-assets` holds the outputs and report.html');
    writeFileSync(summaryPath(), '');
    await pipeline(['run', 'recipes/ci-assets.yaml']);
    expect(summary()).not.toContain('**Artifact:**');
  });

  it('lists only outputs that were written, where they are: --out after a success, the run folder otherwise', async () => {
    const succeeded = await pipeline(['run', 'recipes/ci-assets.yaml', '--out', 'build/ok']);
    expect(succeeded.exitCode, succeeded.stderr).toBe(0);
    const copied = outputsSection(summary());
    expect(copied).toEqual({
      dir: 'build/ok/',
      files: ['backgrounds-1.png', 'backgrounds-2.png', 'backgrounds-3.png', 'icon.png', 'manifest.json'],
    });
    // A failed run copies nothing to --out: the summary says so, and lists the files the run folder has.
    writeFileSync(summaryPath(), '');
    gateway.injectFault({ kind: 'status', status: 402, route: SUBMIT, times: 1 });
    const failed = await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache', '--out', 'build/failed']);
    expect(failed.exitCode).toBe(3);
    expect(existsSync(join(work, 'build', 'failed'))).toBe(false);
    expect(summary()).toContain('Nothing was copied to `build/failed/`: the run stopped.');
    // The two backgrounds that were made (and paid for) count as ran, in a step that failed.
    expect(summary()).toMatch(/^\| backgrounds \| failed \| 2 \| 0 \| 1 \| 0 \| 2 \|/m);
    const kept = outputsSection(summary())!;
    expect(kept.dir).toMatch(/^\.pipeline\/runs\/[^/]+\/outputs\/$/);
    expect(kept.files).toHaveLength(2);
    for (const file of kept.files) expect(existsSync(join(work, kept.dir, file)), file).toBe(true);
    // A run that succeeded copies nothing when its recipe has no outputs: to copy, and says that.
    writeFileSync(summaryPath(), '');
    writeFileSync(
      join(work, 'recipes', 'no-outputs.yaml'),
      'version: 1\nname: no-outputs\nsteps:\n  say: { run: "echo hi" }\n',
    );
    const plain = await pipeline(['run', 'recipes/no-outputs.yaml', '--out', 'build/plain']);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(summary()).toContain('Nothing was copied to `build/plain/`: the recipe has no `outputs:` section.');
  });

  it('leaves out a file the journal names but that is gone (a resume after it was deleted)', async () => {
    gateway.injectFault({ kind: 'status', status: 402, route: SUBMIT, times: 1 });
    const failed = await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache']);
    expect(failed.exitCode).toBe(3);
    const first = outputsSection(summary())!;
    expect(first.files).toHaveLength(2);
    rmSync(join(work, first.dir, first.files[0]!));
    writeFileSync(summaryPath(), '');
    const resumed = await pipeline(['resume', first.dir.split('/')[2]!, '--no-cache']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const listed = outputsSection(summary())!;
    expect(listed.files).not.toContain(first.files[0]);
    for (const file of listed.files) expect(existsSync(join(work, listed.dir, file)), file).toBe(true);
  });

  it('an invalid recipe (exit 2) writes a summary with its diagnostics', async () => {
    writeFileSync(
      join(work, 'recipes', 'broken.yaml'),
      'version: 1\nname: broken\nsteps:\n  a: { run: echo, timeout: soon }\n',
    );
    const run = await pipeline(['run', 'recipes/broken.yaml']);
    expect(run.exitCode).toBe(2);
    const text = summary();
    expect(text).toMatch(/^## ❌ recipes\/broken\.yaml: not run \(exit 2\)$/m);
    expect(text).toContain('1 error in recipes/broken.yaml; nothing was run');
    expect(text).toContain(
      [
        '```text',
        'recipes/broken.yaml:4:28: error: steps.a.timeout must be a duration such as 90s or 15m',
        '  |',
        '4 |   a: { run: echo, timeout: soon }',
        '  |                            ~~~~',
        '```',
      ].join('\n'),
    );
  });

  it('a key the gateway rejects (exit 1) writes a summary and an annotation saying so, without the key', async () => {
    const run = await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache'], {
      PIPELINE_API_KEY: 'sk-rotated-away-123',
    });
    expect(run.exitCode).toBe(1);
    const text = summary();
    expect(text).toMatch(/^## ❌ recipes\/ci-assets\.yaml: not run \(exit 1\)$/m);
    expect(text).toContain('refused the API key (PIPELINE_API_KEY); nothing was run');
    expect(run.stderr).toMatch(/^::error title=pipeline%3A not run::.*refused the API key/m);
    expect(`${text}${run.stdout}${run.stderr}`).not.toContain('sk-rotated-away-123');
  });

  it('counts the 429s the run met, in the plain output and in the summary', async () => {
    // A one-second window: the client waits out an injected 429 until its reset, not for a minute.
    const limited = await startLocalGateway({ clock, latencyScale: 0.01, latencyJitter: 0, seed: 6, windowSeconds: 1 });
    limited.injectFault({ kind: 'status', status: 429, route: SUBMIT, times: 2 });
    const gatewayEnv = { PIPELINE_BASE_URL: limited.baseUrl, PIPELINE_API_KEY: limited.apiKey };
    const run = await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache'], gatewayEnv, limited).finally(() =>
      limited.close(),
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^✓ run \S+ succeeded in [\d.]+s, spent .*; 2 responses were 429 \(rate limited\)$/m);
    // Said once, at the first: the line does not repeat for each.
    expect(run.stderr.match(/^⏳ rate limited \(429\): waiting/gm)).toHaveLength(1);
    expect(summary()).toContain('**Rate limits:** 2 responses were 429 (rate limited)');
    writeFileSync(summaryPath(), '');
    const calm = await pipeline(['run', 'recipes/ci-assets.yaml', '--no-cache']);
    // As a word: a port, a run id or a time may hold the digits 429.
    expect(calm.stderr).not.toMatch(/\b429\b/);
    expect(summary()).toContain('**Rate limits:** no 429');
  });
});
