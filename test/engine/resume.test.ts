import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal, type JournalEvent } from '../../src/store/journal.js';
import { replayJournalFile } from '../../src/store/replay.js';
import { IMAGE_SLUG, tilePerRow, twelveImages } from '../support/recipes.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const SLUG = IMAGE_SLUG;
const RECIPE = twelveImages();

let home: string;
let gatewayProcess: ResultPromise;
let urls: Record<string, string>;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-resume-'));
  await writeFile(join(home, 'twelve.yaml'), RECIPE);
  gatewayProcess = execa(
    'node',
    [cli, 'gateway', 'serve', '--port', '0', '--latency-scale', '0.3', '--latency-jitter', '0', '--seed', '3'],
    { reject: false },
  );
  // It listens on a port of the system's choosing (--port 0) and prints its URLs as one line of JSON.
  urls = JSON.parse(
    await new Promise<string>((resolve, reject) => {
      let seen = '';
      gatewayProcess.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('\n')) resolve(seen.split('\n')[0]!);
      });
      gatewayProcess.once('exit', () => reject(new Error('the gateway exited before printing its URLs')));
    }),
  );
});
afterAll(async () => {
  gatewayProcess.kill('SIGTERM');
  await gatewayProcess;
  await rm(home, { recursive: true, force: true });
});

const env = () => ({
  PIPELINE_HOME: home,
  PIPELINE_BASE_URL: urls.base_url!,
  PIPELINE_API_KEY: urls.api_key!,
  CI: 'true',
});
const stats = async () =>
  (await fetch(`${urls.schema_url}/__emulator/stats`)).json() as Promise<{
    tasks: { submitted: Record<string, number> };
  }>;
const journalOf = (runId: string) => readJournal(join(home, 'runs', runId, 'journal.jsonl'));
const count = (events: JournalEvent[], type: JournalEvent['type']) => events.filter((e) => e.type === type).length;

/** The text gateway's routes, one per protocol: a call takes one of them. */
const TEXT_ROUTES = ['POST /llm/v1/chat/completions', 'POST /llm/v1/responses', 'POST /llm/v1/messages'];

/** The gateway's faults still to come. */
const pendingFaults = async () =>
  ((await (await fetch(`${urls.schema_url}/__emulator/faults`)).json()) as { faults: unknown[] }).faults.length;

/** The next text call, whatever its protocol, is answered `ms` late. */
async function delayNextTextCall(ms: number): Promise<void> {
  for (const route of TEXT_ROUTES)
    await fetch(`${urls.schema_url}/__emulator/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'delay', delay_ms: ms, route, times: 1 }),
    });
}

/** Waits until the gateway has taken one of the delays: the call is on the wire. */
async function textCallOnTheWire(): Promise<void> {
  for (let i = 0; i < 400 && (await pendingFaults()) === TEXT_ROUTES.length; i++)
    await new Promise((r) => setTimeout(r, 25));
}

/** Waits, on real I/O, until the journal of the only run satisfies `ready`. */
async function waitForJournal(ready: (events: JournalEvent[]) => boolean): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const runs = existsSync(join(home, 'runs')) ? (await import('node:fs')).readdirSync(join(home, 'runs')) : [];
    const id = runs[0];
    if (id && existsSync(join(home, 'runs', id, 'journal.jsonl')) && ready(journalOf(id))) return id;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the run never reached the expected state');
}

describe('a run killed with SIGKILL, then resumed', () => {
  it('completes without submitting any task twice, apart from the one in flight at the kill', async () => {
    const run = execa('node', [cli, 'run', join(home, 'twelve.yaml')], { reject: false, env: env() });
    // Let four tasks be submitted, then hold the next submission's answer so that it is in flight.
    const runId = await waitForJournal((events) => count(events, 'task-submitted') >= 4);
    await fetch(`${urls.schema_url}/__emulator/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'delay', delay_ms: 20_000, route: 'POST /api/v1/{provider}/{model_id}' }),
    });
    await waitForJournal(
      (events) => count(events, 'request-sent') > count(events, 'task-submitted') + count(events, 'submission-refused'),
    );
    run.kill('SIGKILL');
    const killed = await run;
    expect(killed.signal).toBe('SIGKILL');

    const atKill = journalOf(runId);
    const inFlight = count(atKill, 'request-sent') - count(atKill, 'task-submitted');
    expect(inFlight).toBeGreaterThanOrEqual(1);

    // Without permission, a submission whose outcome is unknown is not sent again: the other
    // pictures are made, the run fails and says why.
    const cautious = await execa('node', [cli, 'resume', runId], { reject: false, env: env() });
    expect(cautious.exitCode).toBe(1);
    expect(cautious.stderr).toMatch(
      /was in flight when the run stopped; it may have created a task\. Check the team's tasks in the gateway's dashboard \(its API lists none\), then resume with --resubmit-unknown/,
    );
    const afterCautious = journalOf(runId);
    expect(count(afterCautious, 'task-submitted')).toBe(12 - inFlight);
    expect((await stats()).tasks.submitted[SLUG]).toBeLessThanOrEqual(12);

    const resumed = await execa('node', [cli, 'resume', runId, '--resubmit-unknown', '--json'], {
      reject: false,
      env: env(),
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const report = JSON.parse(resumed.stdout);
    expect(report.status).toBe('succeeded');
    expect(report.files).toHaveLength(12);

    // Twelve pictures; only the submissions in flight at the kill may have been sent twice.
    const submitted = (await stats()).tasks.submitted[SLUG]!;
    expect(submitted).toBeGreaterThanOrEqual(12);
    expect(submitted - 12).toBeLessThanOrEqual(inFlight);
    // Every task the journal had recorded was polled, not submitted again.
    const taskIds = journalOf(runId)
      .filter((e) => e.type === 'task-submitted')
      .map((e) => (e as { task_id: string }).task_id);
    expect(new Set(taskIds).size).toBe(taskIds.length);

    const shown = await execa('node', [cli, 'runs', 'show', runId], { reject: false, env: env() });
    expect(shown.stdout).toMatch(/^status\s+succeeded/m);
    const summary = JSON.parse(readFileSync(join(home, 'runs', runId, 'run.json'), 'utf8'));
    expect(summary.status).toBe('succeeded');
  });

  it('stops on Ctrl-C with exit 130, prints the command that resumes, and resumes', async () => {
    await rm(join(home, 'runs'), { recursive: true, force: true });
    // The first test's pictures are in the step cache: this run must make its own.
    const run = execa('node', [cli, 'run', join(home, 'twelve.yaml'), '--no-cache'], { reject: false, env: env() });
    const runId = await waitForJournal((events) => count(events, 'task-submitted') >= 2);
    run.kill('SIGINT');
    const stopped = await run;
    expect(stopped.exitCode).toBe(130);
    // One line for the steps the stop cancelled, and a command that works from the project's install.
    expect(stopped.stderr).toMatch(
      new RegExp(
        `\\nStopped\\. 1 step cancelled: \\w+\\. Resume with:\\n  npx media-pipeline resume ${runId} --no-cache$`,
      ),
    );
    expect(stopped.stderr).not.toMatch(/✗/);
    expect(stopped.stderr).not.toMatch(/MaxListenersExceeded/);
    const events = journalOf(runId);
    expect(events.at(-1)?.type).toBe('run-interrupted');
    // Every submission that left was answered before the process stopped: none is in doubt.
    expect(count(events, 'request-sent')).toBe(count(events, 'task-submitted'));
    const resumed = await execa('node', [cli, 'resume', runId, '--json'], { reject: false, env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).files).toHaveLength(12);
  });

  it('a batch stopped after some rows ended: the resume keeps nothing of those rows and runs only the others', async () => {
    await rm(join(home, 'runs'), { recursive: true, force: true });
    await writeFile(join(home, 'tiles.yaml'), tilePerRow('tiles'));
    const rows = Array.from({ length: 8 }, (_, i) => `tile ${i}`);
    await writeFile(join(home, 'tiles.csv'), `prompt\n${rows.join('\n')}\n`);
    const args = [cli, 'run', join(home, 'tiles.yaml'), '--batch', join(home, 'tiles.csv'), '--no-cache'];
    const run = execa('node', args, { reject: false, env: env() });
    const runId = await waitForJournal((events) => count(events, 'step-finished') >= 3);
    run.kill('SIGINT');
    expect((await run).exitCode).toBe(130);

    const atStop = journalOf(runId);
    const ended = atStop.filter((e) => e.type === 'step-finished').map((e) => (e as { row: number }).row);
    expect(ended.length).toBeGreaterThanOrEqual(3);
    expect(ended.length).toBeLessThan(8);
    const replayed = replayJournalFile(join(home, 'runs', runId, 'journal.jsonl'));
    if (!replayed.ok) throw new Error(replayed.error.message);
    const state = replayed.value;
    expect(state.completeRows?.size).toBe(ended.length);
    for (const row of ended) {
      expect(state.completeRows?.has(row)).toBe(true);
      expect(state.finishedSteps.has(`${row}/tile`)).toBe(false);
    }
    expect(state.downloads.size).toBe(0);

    const resumed = await execa('node', [cli, 'resume', runId, '--json'], { reject: false, env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).status).toBe('succeeded');
    // Each row's tile made once: the ended rows were not run again.
    const events = journalOf(runId);
    expect(count(events, 'task-submitted')).toBe(8);
    expect(new Set(events.filter((e) => e.type === 'step-finished').map((e) => (e as { row: number }).row)).size).toBe(
      8,
    );
    const summary = JSON.parse(readFileSync(join(home, 'runs', runId, 'run.json'), 'utf8'));
    expect(summary.status).toBe('succeeded');
  });

  it('a text call on the wire at a kill is not sent again by a resume unless told to: it may have been billed', async () => {
    await rm(join(home, 'runs'), { recursive: true, force: true });
    await writeFile(
      join(home, 'brief.yaml'),
      'version: 1\nname: one-brief\nsteps:\n  brief:\n    uses: llm\n    with: { model: vendor-x/writer-1, prompt: a launch brief }\n',
    );
    const routes = TEXT_ROUTES;
    const textCalls = async () => {
      const byRoute = (
        (await (await fetch(`${urls.schema_url}/__emulator/stats`)).json()) as {
          requests: { by_route: Record<string, number> };
        }
      ).requests.by_route;
      return routes.reduce((sum, route) => sum + (byRoute[route] ?? 0), 0);
    };
    const before = await textCalls();
    // The call is answered 1.5 s late: the kill comes while it is on the wire.
    await delayNextTextCall(1500);
    const run = execa('node', [cli, 'run', join(home, 'brief.yaml'), '--no-cache'], { reject: false, env: env() });
    const runId = await waitForJournal((events) => count(events, 'call-sent') === 1);
    await textCallOnTheWire();
    run.kill('SIGKILL');
    expect((await run).signal).toBe('SIGKILL');
    expect(await pendingFaults()).toBe(routes.length - 1);
    expect(count(journalOf(runId), 'call-ended')).toBe(0);

    const cautious = await execa('node', [cli, 'resume', runId], { reject: false, env: env() });
    expect(cautious.exitCode).toBe(1);
    expect(cautious.stderr).toContain(
      "the call of brief to vendor-x/writer-1 was in flight when the run stopped; it may have been answered, and billed. Check the team's balance (`pipeline account`; a text call makes no task), then resume with --resubmit-unknown",
    );
    // The gateway counts a call once it has answered it: the killed run's call, whose client is gone, is not.
    expect(await textCalls()).toBe(before);
    const shown = await execa('node', [cli, 'runs', 'show', runId], { reject: false, env: env() });
    expect(shown.stdout).toMatch(/outcome.*unknown|unknown outcome|in flight/i);

    const told = await execa('node', [cli, 'resume', runId, '--resubmit-unknown', '--json'], {
      reject: false,
      env: env(),
    });
    expect(told.exitCode, told.stderr).toBe(0);
    expect(await textCalls()).toBe(before + 1);
  });
});

describe('a text call on the wire at Ctrl-C', () => {
  it('is let answer, as a submission is: the call ends answered, and a resume has nothing to pay for again', async () => {
    await rm(join(home, 'runs'), { recursive: true, force: true });
    await writeFile(
      join(home, 'brief-then.yaml'),
      'version: 1\nname: brief-then\nsteps:\n  brief:\n    uses: llm\n    with: { model: vendor-x/writer-1, prompt: a launch brief }\n  after: { run: "echo ${{ steps.brief.outputs.text }}" }\n',
    );
    await delayNextTextCall(1500);
    const run = execa('node', [cli, 'run', join(home, 'brief-then.yaml'), '--no-cache'], { reject: false, env: env() });
    const runId = await waitForJournal((events) => count(events, 'call-sent') === 1);
    await textCallOnTheWire();
    run.kill('SIGINT');
    const stopped = await run;
    expect(stopped.exitCode, stopped.stderr).toBe(130);
    // Cut off, it had ended `unknown` ("cancelled"), and a resume could only pay for it again.
    const ended = journalOf(runId).filter((e) => e.type === 'call-ended');
    expect(ended).toEqual([expect.objectContaining({ outcome: 'answered' })]);
    const resumed = await execa('node', [cli, 'resume', runId], { reject: false, env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    // The delays of the two protocols the call did not use would slow the tests after this one.
    await fetch(`${urls.schema_url}/__emulator/faults`, { method: 'DELETE' });
  });
});

describe("a run stopped while it downloads a task's files", () => {
  it('is cancelled there, not failed: the task is done and paid, and the resume downloads its files', {
    timeout: 60_000,
  }, async () => {
    await rm(join(home, 'runs'), { recursive: true, force: true });
    await writeFile(
      join(home, 'one.yaml'),
      `version: 1\nname: one\nsteps:\n  image: { uses: ${SLUG}, with: { prompt: a kite, aspect_ratio: "1:1" } }\n`,
    );
    await fetch(`${urls.schema_url}/__emulator/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'delay', delay_ms: 20_000, route: 'GET /results/{token}/{name}', times: 1 }),
    });
    const run = execa('node', [cli, 'run', join(home, 'one.yaml'), '--no-cache'], { reject: false, env: env() });
    const runId = await waitForJournal((events) => count(events, 'task-finished') === 1);
    run.kill('SIGINT');
    const stopped = await run;
    expect(stopped.exitCode, stopped.stderr).toBe(130);
    expect(stopped.stderr).not.toMatch(/failed/);
    const events = journalOf(runId);
    expect(count(events, 'step-cancelled')).toBe(1);
    expect(count(events, 'step-failed') + count(events, 'item-failed')).toBe(0);
    const submitted = (await stats()).tasks.submitted[SLUG] ?? 0;
    const resumed = await execa('node', [cli, 'resume', runId, '--no-cache', '--json'], { reject: false, env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).files).toHaveLength(1);
    expect((await stats()).tasks.submitted[SLUG] ?? 0).toBe(submitted);
  });
});
