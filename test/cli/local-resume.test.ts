import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const logo = fileURLToPath(new URL('../../recipes/assets/logo.png', import.meta.url));

// At this scale `quick` takes about 1.75 s and each `slow` task about 8 s on the built-in gateway:
// the run is killed between the two, with one step's files downloaded and three tasks running. (At
// 5.5 s, under the whole suite's load on two cores, two slow tasks had ended before the kill.)
const RECIPE = `version: 1
name: killed-local
settings: { concurrency: 4 }
steps:
  quick:
    uses: vendor-a/vendor-a-v3-t2i
    with: { prompt: "a quick sketch", aspect_ratio: "1:1" }
  slow:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: ["a", "b", "c"]
    with: { prompt: "picture \${{ item }}", aspect_ratio: "1:1", n: 6 }
  framed:
    uses: vendor-b/vendor-b-5.0-lite-edit
    with:
      prompt: Frame the sketch with the first picture and the logo.
      image: ["\${{ steps.quick.outputs.images[0].url }}", "\${{ steps.slow.outputs[0].images[0].url }}", ./logo.png]
      size: 1024x1024
outputs:
  framed: \${{ steps.framed.outputs.images[0] }}
`;

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-local-resume-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const env = () => ({ PIPELINE_HOME: join(home, '.pipeline'), PIPELINE_LOCAL_LATENCY_SCALE: '0.5' });

type Event = { type: string; step?: string };

async function journalOf(runId: string): Promise<Event[]> {
  const text = await readFile(join(home, '.pipeline', 'runs', runId, 'journal.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Event);
}

/** Polls the journal until `ready` holds (the run is in the state the test kills it in); fails if the run ends first. */
async function waitForJournal(exited: () => boolean, ready: (events: Event[]) => boolean): Promise<string> {
  for (;;) {
    const [runId] = await readdir(join(home, '.pipeline', 'runs')).catch(() => [] as string[]);
    if (runId && ready(await journalOf(runId))) return runId;
    if (exited()) throw new Error('the run ended before it reached the state the test kills it in');
    await pause(25);
  }
}

/** The recipe's run on the built-in gateway, as a process, and whether it has ended. */
async function startRun() {
  await writeFile(join(home, 'killed.yaml'), RECIPE);
  await copyFile(logo, join(home, 'logo.png'));
  const run = execa('node', [cli, 'run', 'killed.yaml', '--local'], { cwd: home, env: env(), reject: false });
  let ended = false;
  void run.finally(() => {
    ended = true;
  });
  return { run, exited: () => ended };
}

/**
 * The resume, in this process through the bin's entry point, on a manual clock that starts at real
 * time now (the killed run dated its tasks by real time): the tasks' remaining latency takes no real time.
 */
const resume = (args: string[]) =>
  pipelineInProcess(args, { cwd: home, env: { ...process.env, ...env() }, clock: new ManualClock(Date.now()) });

const count = (events: Event[], type: string, step?: string) =>
  events.filter((event) => event.type === type && (step === undefined || event.step === step)).length;

describe('a --local run, killed and resumed', () => {
  it('finds its tasks and files again in the built-in gateway and ends with nothing paid twice', async () => {
    const { run, exited } = await startRun();
    const runId = await waitForJournal(
      exited,
      (events) => count(events, 'step-finished', 'quick') === 1 && count(events, 'task-submitted', 'slow') === 3,
    );
    run.kill('SIGKILL');
    const killed = await run;
    expect(killed.signal).toBe('SIGKILL');
    const before = await journalOf(runId);
    expect(count(before, 'run-finished')).toBe(0);
    expect(count(before, 'task-finished', 'slow')).toBe(0);

    const resumed = await resume(['resume', runId, '--local']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`✓ run ${runId} succeeded`));

    const events = await journalOf(runId);
    // Each task was paid for once: the resume read the three running ones back instead of sending them again.
    expect(count(events, 'task-submitted', 'quick')).toBe(1);
    expect(count(events, 'task-submitted', 'slow')).toBe(3);
    expect(count(events, 'task-submitted', 'framed')).toBe(1);
    expect(count(events, 'task-finished', 'slow')).toBe(3);
    const summary = JSON.parse(await readFile(join(home, '.pipeline', 'runs', runId, 'run.json'), 'utf8'));
    expect(summary.status).toBe('succeeded');
    const framed = summary.outputs.framed;
    // The edit model answers in JPEG unless asked otherwise.
    expect([...(await readFile(framed.path)).subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  });

  it('prints, at Ctrl-C, a resume command that works as printed', async () => {
    const { run, exited } = await startRun();
    const runId = await waitForJournal(exited, (events) => count(events, 'task-submitted', 'slow') === 3);
    run.kill('SIGINT');
    const stopped = await run;
    expect(stopped.exitCode, stopped.stderr).toBe(130);
    const printed = /Resume with:\n {2}(.+)$/.exec(stopped.stderr)?.[1];
    // Not installed globally here, so the command goes through npx, which runs this package's bin.
    expect(printed).toBe(`npx media-pipeline resume ${runId} --local`);
    const [, , ...args] = printed!.split(' ');
    const resumed = await resume(args);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const events = await journalOf(runId);
    expect(count(events, 'task-submitted', 'slow')).toBe(3);
    expect(count(events, 'run-finished')).toBe(1);
  });
});
