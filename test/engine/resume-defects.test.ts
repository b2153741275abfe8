import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withPngText } from '../../src/local-gateway/media/codecs.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { readJournal, readJournalFile, type JournalEvent } from '../../src/store/journal.js';
import { type InProcessOptions, pipelineInProcess, TestInterrupts } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';
import { IMAGE_SLUG, twelveImages } from '../support/recipes.js';

const logo = fileURLToPath(new URL('../../recipes/assets/logo.png', import.meta.url));
const SLUG = IMAGE_SLUG;
const EDIT = 'vendor-b/vendor-b-5.0-lite-edit';
const TWELVE = twelveImages();
const LOCAL_FILE = `version: 1
name: local-file
settings: { retries: 0 }
steps:
  icon:
    uses: ${EDIT}
    with:
      prompt: Turn the image into a rounded app icon.
      image: [./assets/logo.png]
      size: 1024x1024
`;

let gateway: LocalGateway;
/** The gateway's and the commands' time: task latencies and polls take no real time. */
const clock = new ManualClock();
let root: string;
let home: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0.3, latencyJitter: 0, seed: 3 });
  root = await mkdtemp(join(tmpdir(), 'pipeline-resume-defects-'));
  writeFileSync(join(root, 'twelve.yaml'), TWELVE);
});
afterAll(async () => {
  await gateway.close();
  await rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  home = join(root, `home-${Math.random().toString(36).slice(2)}`);
});

const env = () => ({
  PIPELINE_HOME: home,
  PIPELINE_BASE_URL: gateway.baseUrl,
  PIPELINE_API_KEY: gateway.apiKey,
  CI: 'true',
});
/** `pipeline …` in this process, through the bin's entry point, on the gateway's manual clock. */
const pipeline = (args: string[], cwd = root, more: Pick<InProcessOptions, 'interrupts' | 'observe'> = {}) =>
  pipelineInProcess(args, { env: env(), cwd, clock, gateway, ...more });
const journalPath = (runId: string) => join(home, 'runs', runId, 'journal.jsonl');
const count = (events: JournalEvent[], type: JournalEvent['type']) => events.filter((e) => e.type === type).length;
const submitted = (slug: string) => gateway.stats().tasks.submitted[slug] ?? 0;

/**
 * Runs `args` and presses Ctrl-C once `enough` holds; `enough` is looked at only after `submissions`
 * more tasks reached the gateway, a cheap check before the journal is read.
 */
async function interrupted(args: string[], submissions: number, enough: () => boolean) {
  const start = submitted(SLUG);
  const interrupts = new TestInterrupts();
  let pressed = false;
  const result = await pipeline(args, root, {
    interrupts,
    observe: () => {
      if (pressed || submitted(SLUG) - start < submissions || !enough()) return;
      pressed = true;
      interrupts.press();
    },
  });
  expect(pressed, 'the run ended before it was interrupted').toBe(true);
  expect(result.exitCode, result.stderr).toBe(130);
  return result;
}

/** Starts the twelve-picture run and stops it with Ctrl-C once `after` tasks are submitted: nothing is left in doubt. */
async function interruptedRun(after: number): Promise<string> {
  const journalOfRun = () => {
    const ids = existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : [];
    return ids[0] && existsSync(journalPath(ids[0])) ? journalPath(ids[0]) : undefined;
  };
  const submittedInJournal = () => {
    const path = journalOfRun();
    return path ? count(readJournal(path), 'task-submitted') : 0;
  };
  // --no-cache: every test runs the same recipe in one home, and each must submit its own tasks.
  await interrupted(['run', join(root, 'twelve.yaml'), '--no-cache'], after, () => submittedInJournal() >= after);
  const runId = readdirSync(join(home, 'runs'))[0]!;
  const events = readJournal(journalPath(runId));
  expect(count(events, 'request-sent')).toBe(count(events, 'task-submitted'));
  return runId;
}

describe('resume over a damaged journal', () => {
  it('a garbage line in the middle hides nothing after it, and resume refuses until --force', async () => {
    const before = submitted(SLUG);
    const runId = await interruptedRun(4);
    const lines = readFileSync(journalPath(runId), 'utf8').split('\n');
    // After run-started and the first records: everything after it must still be read.
    lines.splice(3, 0, '{"type":"task-submitted","row":0,"st');
    writeFileSync(journalPath(runId), lines.join('\n'));

    const refused = await pipeline(['resume', runId]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/1 line \(4\) that could not be read/);
    expect(refused.stderr).toMatch(/--force/);
    expect(submitted(SLUG) - before).toBe(count(readJournal(journalPath(runId)), 'task-submitted'));

    const forced = await pipeline(['resume', runId, '--force', '--json']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout).files).toHaveLength(12);
    // Every task recorded after the bad line was polled, not paid for again: twelve pictures, twelve tasks.
    expect(submitted(SLUG) - before).toBe(12);
    const read = readJournalFile(journalPath(runId));
    expect(read.damagedLines).toEqual([4]);
    expect(read.events.find((e) => e.type === 'run-resumed')).toMatchObject({ accepted_damage: [4] });
    const shown = await pipeline(['runs', 'show', runId]);
    expect(shown.stdout).toMatch(/^journal\s+1 line \(4\) could not be read$/m);
    const listed = await pipeline(['runs', 'list']);
    expect(listed.stderr).toContain(`run ${runId}: 1 line (4) of its journal could not be read`);
  });

  it('a cut last line: new records start on a line of their own, and a second resume needs no --force', async () => {
    const before = submitted(SLUG);
    const runId = await interruptedRun(2);
    const text = readFileSync(journalPath(runId), 'utf8');
    writeFileSync(journalPath(runId), text.slice(0, text.length - 40));
    const lineCount = text.split('\n').filter(Boolean).length;

    const refused = await pipeline(['resume', runId]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`1 line \\(${lineCount}\\) that could not be read`));

    // Stopped again at once: the forced resume's records must survive the cut line before them.
    await interrupted(['resume', runId, '--force'], 4, () => {
      const events = readJournal(journalPath(runId));
      return count(events, 'task-submitted') >= count(events, 'run-resumed') + 4;
    });
    const read = readJournalFile(journalPath(runId));
    expect(read.damagedLines).toEqual([lineCount]);
    expect(read.events.filter((e) => e.type === 'run-resumed')).toHaveLength(1);

    const again = await pipeline(['resume', runId, '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).files).toHaveLength(12);
    // The cut line was the run's last record (run-interrupted): nothing was lost, nothing paid twice.
    expect(submitted(SLUG) - before).toBe(12);
  });
});

describe('an empty journal', () => {
  it('is listed as unreadable; show and resume say so with exit 2', async () => {
    const good = await interruptedRun(1);
    const empty = '20990101-000000-twelve-dead';
    mkdirSync(join(home, 'runs', empty), { recursive: true });
    writeFileSync(journalPath(empty), '');

    const list = await pipeline(['runs', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${empty}\\s+unreadable`, 'm'));
    expect(list.stdout).toMatch(new RegExp(`^${good}\\s+interrupted`, 'm'));
    const json = await pipeline(['runs', 'list', '--json']);
    expect(JSON.parse(json.stdout)[0]).toEqual({
      run_id: empty,
      status: 'unreadable',
      problem: expect.stringMatching(/empty/),
    });

    for (const args of [
      ['runs', 'show', empty],
      ['resume', empty],
    ]) {
      const result = await pipeline(args);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/journal is empty/);
      expect(result.stderr).not.toMatch(/Internal error/);
    }
  });
});

describe('a run whose recipe uses a relative local file', () => {
  it('resumes from another folder, and refuses when the file changed unless --force', async () => {
    const project = join(root, `project-${Math.random().toString(36).slice(2)}`);
    mkdirSync(join(project, 'assets'), { recursive: true });
    copyFileSync(logo, join(project, 'assets', 'logo.png'));
    writeFileSync(join(project, 'recipe.yaml'), LOCAL_FILE);
    // The submission is refused (no credit): the run fails before any task exists.
    gateway.injectFault({ kind: 'status', status: 402, route: 'POST /api/v1/{provider}/{model_id}', times: 1 });
    const failed = await pipeline(['run', 'recipe.yaml'], project);
    expect(failed.exitCode, failed.stderr).toBe(3);
    const runId = readdirSync(join(home, 'runs'))[0]!;
    const started = readJournal(journalPath(runId))[0] as Extract<JournalEvent, { type: 'run-started' }>;
    expect(Object.keys(started.local_files ?? {})).toEqual([join(project, 'assets', 'logo.png')]);

    const elsewhere = await pipeline(['resume', runId, '--json'], tmpdir());
    expect(elsewhere.exitCode, elsewhere.stderr).toBe(0);
    expect(JSON.parse(elsewhere.stdout).status).toBe('succeeded');

    // A second run, then the file changes before its resume.
    gateway.injectFault({ kind: 'status', status: 402, route: 'POST /api/v1/{provider}/{model_id}', times: 1 });
    await rm(join(home, 'runs'), { recursive: true, force: true });
    // --no-cache: the first run's outputs are in the step cache, and this run must submit.
    expect((await pipeline(['run', 'recipe.yaml', '--no-cache'], project)).exitCode).toBe(3);
    const second = readdirSync(join(home, 'runs'))[0]!;
    const bytes = readFileSync(join(project, 'assets', 'logo.png'));
    writeFileSync(join(project, 'assets', 'logo.png'), withPngText(bytes, 'Comment', 'edited'));
    const refused = await pipeline(['resume', second], tmpdir());
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/local files changed since the run started: .*logo\.png\. Resume with --force/);
    const forced = await pipeline(['resume', second, '--force'], tmpdir());
    expect(forced.exitCode, forced.stderr).toBe(0);
  });
});
