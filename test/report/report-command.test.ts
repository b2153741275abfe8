import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { readJournal, type JournalEvent } from '../../src/store/journal.js';
import { pipelineInProcess, TestInterrupts } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';
import { twelveImages } from '../support/recipes.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const TWELVE = twelveImages('picture ${{ item }} <script>alert(1)</script>');
const FAILING = `version: 1
name: failing
settings: { retries: 0 }
steps:
  icon:
    uses: vendor-a/vendor-a-v3-t2i
    with: { prompt: "an icon", aspect_ratio: "1:1" }
  check:
    run: ["node", "-e", "console.error('the icon is too dark'); process.exit(3)"]
    needs: [icon]
`;

/** For the runs in this process: on the manual clock, so that polls and latencies take no real time. */
let gateway: LocalGateway;
const clock = new ManualClock();
/** For the runs in a process of their own (a run killed with SIGKILL), on real time. */
let realTimeGateway: LocalGateway;
let root: string;
let home: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0.3, latencyJitter: 0, seed: 3 });
  realTimeGateway = await startLocalGateway({ latencyScale: 0.3, latencyJitter: 0, seed: 3 });
  root = await mkdtemp(join(tmpdir(), 'pipeline-report-command-'));
  writeFileSync(join(root, 'twelve.yaml'), TWELVE);
  writeFileSync(join(root, 'failing.yaml'), FAILING);
});
afterAll(async () => {
  await gateway.close();
  await realTimeGateway.close();
  await rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  home = join(root, `home-${Math.random().toString(36).slice(2)}`);
});

const env = (on = gateway) => ({
  PIPELINE_HOME: home,
  PIPELINE_BASE_URL: on.baseUrl,
  PIPELINE_API_KEY: on.apiKey,
  CI: 'true',
});
/** `pipeline …` in this process, through the bin's entry point, on the manual clock. */
const pipeline = (args: string[], more: { interrupts?: TestInterrupts; observe?: () => void } = {}) =>
  pipelineInProcess(args, { env: env(), cwd: root, clock, gateway, ...more });
const journalPath = (runId: string) => join(home, 'runs', runId, 'journal.jsonl');
const count = (events: JournalEvent[], type: JournalEvent['type']) => events.filter((e) => e.type === type).length;
const attributes = (page: string, name: string) =>
  [...page.matchAll(new RegExp(`${name}="([^"]*)"`, 'g'))].map((m) => m[1]!);

const runIdOf = () => (existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs'))[0] : undefined);
const itemsFinished = (id: string | undefined) =>
  id && existsSync(journalPath(id)) ? count(readJournal(journalPath(id)), 'item-finished') : 0;

/** Starts the twelve-picture run in this process and presses Ctrl-C once `after` items are done. */
async function interruptedRun(after: number) {
  const interrupts = new TestInterrupts();
  const submitted = () => Object.values(gateway.stats().tasks.submitted).reduce((a, b) => a + b, 0);
  const before = submitted();
  let pressed = false;
  const result = await pipeline(['run', join(root, 'twelve.yaml')], {
    interrupts,
    observe: () => {
      // Cheap first: no item is done before `after` tasks were submitted.
      if (pressed || submitted() - before < after || itemsFinished(runIdOf()) < after) return;
      pressed = true;
      interrupts.press();
    },
  });
  if (!pressed) throw new Error('the run never finished enough items');
  return { runId: runIdOf()!, result };
}

/** Starts the twelve-picture run as a process of its own (only a process can be killed) and kills it once `after` items are done. */
async function killedRun(after: number) {
  const run = execa('node', [cli, 'run', join(root, 'twelve.yaml')], {
    reject: false,
    env: env(realTimeGateway),
    cwd: root,
  });
  for (let i = 0; i < 800; i++) {
    const id = runIdOf();
    if (itemsFinished(id) >= after) {
      run.kill('SIGKILL');
      return { runId: id!, result: await run };
    }
    await new Promise((done) => setTimeout(done, 25));
  }
  throw new Error('the run never finished enough items');
}

describe('report.html at the end of every run', () => {
  it('an interrupted run writes its report: its status, the items done and the ones left', async () => {
    const { runId, result } = await interruptedRun(2);
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toContain(`report: `);
    const page = readFileSync(join(home, 'runs', runId, 'report.html'), 'utf8');
    expect(page).toContain('id="run-status" style="background:#868e96">interrupted</span>');
    const done = count(readJournal(journalPath(runId)), 'item-finished');
    expect(attributes(page, 'data-status').filter((s) => s === 'succeeded').length).toBeGreaterThanOrEqual(done);
    // Prompts are shown as text: a prompt with markup cannot run script in the page. Which items were
    // submitted by the time of the stop depends on the machine's load, so any item's prompt will do.
    expect(page).toMatch(/picture [a-l] &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    expect(page.match(/<script>/g)).toHaveLength(1);
  }, 60_000);

  it('a failed run writes its report with the failure in place', async () => {
    const result = await pipeline(['run', join(root, 'failing.yaml')]);
    expect(result.exitCode, result.stderr).toBe(1);
    const runId = readdirSync(join(home, 'runs'))[0]!;
    const page = readFileSync(join(home, 'runs', runId, 'report.html'), 'utf8');
    expect(page).toMatch(
      /<section class="step" data-step="check" data-status="failed">[\s\S]*<div class="error">[^<]*exit/,
    );
    expect(page).toMatch(/<g class="dag-node" data-step="icon" data-status="succeeded">/);
    expect(page).toMatch(/<g class="dag-node" data-step="check" data-status="failed">/);
    expect(page).toContain('src="data:image/webp;base64,');
  }, 60_000);
});

describe('pipeline run --no-report', () => {
  it('writes no report.html; pipeline report writes it afterwards', async () => {
    const result = await pipeline(['run', join(root, 'failing.yaml'), '--no-report']);
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).not.toContain('report: ');
    const runId = readdirSync(join(home, 'runs'))[0]!;
    expect(existsSync(join(home, 'runs', runId, 'report.html'))).toBe(false);
    expect((await pipeline(['report', runId])).exitCode).toBe(0);
    expect(readFileSync(join(home, 'runs', runId, 'report.html'), 'utf8')).toContain('>failed</span>');
  }, 60_000);
});

describe('pipeline report RUN_ID', () => {
  it('writes the report of a killed run from its journal; --out links outputs relative to its place', async () => {
    const { runId, result } = await killedRun(3);
    expect(result.signal).toBe('SIGKILL');
    expect(existsSync(join(home, 'runs', runId, 'report.html'))).toBe(false);

    const again = await pipeline(['report', runId]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(resolve(root, again.stdout.trim())).toBe(join(home, 'runs', runId, 'report.html'));
    expect(readFileSync(join(home, 'runs', runId, 'report.html'), 'utf8')).toContain('>running</span>');

    const out = join(root, 'elsewhere', 'kit.html');
    await mkdir(dirname(out), { recursive: true });
    expect((await pipeline(['report', runId, '--out', out])).exitCode).toBe(0);
    const links = attributes(readFileSync(out, 'utf8'), 'href').filter((h) => h.endsWith('.png'));
    expect(links.length).toBeGreaterThanOrEqual(3);
    for (const link of links) {
      expect(link.startsWith('../')).toBe(true);
      expect(existsSync(resolve(dirname(out), decodeURIComponent(link)))).toBe(true);
    }
  }, 60_000);

  it('says what is wrong with an unknown run or an --out it cannot write; --open uses the system opener', async () => {
    const unknown = await pipeline(['report', 'no-such-run']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('no run no-such-run in');
    const { runId } = await interruptedRun(1);
    const missing = await pipeline(['report', runId, '--out', join(root, 'no', 'such', 'folder', 'r.html')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/--out: the folder .*no\/such\/folder does not exist/);
    // --open hands the page to the system's opener; without one, a warning, and the report is still written.
    const bin = join(root, `bin-${runId}`);
    await mkdir(bin);
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" > ${join(bin, 'opened')}\n`, { mode: 0o755 });
    const opened = await execa(process.execPath, [cli, 'report', runId, '--open'], {
      reject: false,
      env: { ...env(), PATH: bin },
      cwd: root,
    });
    expect(opened.exitCode, opened.stderr).toBe(0);
    await expect.poll(() => existsSync(join(bin, 'opened'))).toBe(true);
    expect(readFileSync(join(bin, 'opened'), 'utf8').trim()).toBe(join(home, 'runs', runId, 'report.html'));
    const noOpener = await execa(process.execPath, [cli, 'report', runId, '--open'], {
      reject: false,
      env: { ...env(), PATH: root },
      cwd: root,
    });
    expect(noOpener.exitCode).toBe(0);
    expect(noOpener.stderr).toContain('warning: --open: could not start xdg-open');
  }, 60_000);
});
