import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, resumeRecipe, runRecipe } from '../../src/index.js';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { reportData } from '../../src/report/data.js';
import { readJournalFile } from '../../src/store/journal.js';
import { replayJournal } from '../../src/store/replay.js';
import { summariseJournal } from '../../src/store/summary.js';
import { skippingTime } from '../support/cli.js';
import { endpointsOf } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';
import { IMAGE_SLUG } from '../support/recipes.js';

// Paid pictures, then a chain of local commands where the item `bad` fails and the item it feeds is skipped.
const RECIPE = `version: 1
name: agree
steps:
  pics:
    uses: ${IMAGE_SLUG}
    for_each: [a, b]
    with: { prompt: "picture \${{ item }}", aspect_ratio: "1:1" }
  make:
    for_each: [a, b, bad, c]
    cache: true
    run: ["node", "-e", "if (process.argv[1] === 'bad') process.exit(3); console.log(process.argv[1])", "\${{ item }}"]
  use:
    for_each: \${{ steps.make.outputs[*].stdout }}
    run: ["node", "-e", "console.log(process.argv[1] + '!')", "\${{ item }}"]
`;

let dir: string;
let clock: ManualClock;
let gateway: LocalGateway;
/** The journals the runs wrote: a first run, a second one served by the step cache, and its resume. */
const journals: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pipeline-fold-agreement-'));
  clock = new ManualClock();
  gateway = await startLocalGateway({ clock, seed: 3 });
  await writeFile(join(dir, 'agree.yaml'), RECIPE);
  const options: RunOptions = {
    cwd: dir,
    env: { PATH: process.env.PATH },
    clock,
    gateway: { ...endpointsOf(gateway), apiKey: gateway.apiKey },
    report: false,
    warn: () => {},
  };
  // A run does work no check sees (child processes, files): the command line's generous bounds.
  const skipping = <T>(work: Promise<T>) => skippingTime(clock, gateway, work);
  for (const name of ['first', 'cached']) {
    const run = await skipping(runRecipe({ ...options, recipe: 'agree.yaml' }));
    if (!run.ok) throw new Error(run.error.message);
    expect(run.value.status).toBe('failed');
    journals[name] = join(run.value.runDir, 'journal.jsonl');
  }
  const runId = journals.cached!.split('/').at(-2)!;
  const resumed = await skipping(resumeRecipe(runId, options));
  if (!resumed.ok) throw new Error(resumed.error.message);
  journals.resumed = journals.cached!;
}, 120_000);
afterAll(async () => {
  await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const indices = (list: Array<{ index: number }> | undefined) => (list ?? []).map((i) => i.index).sort();

describe('the report, the summary and the resume state, read off one fold', () => {
  it.each(['first', 'cached', 'resumed'])('agree on the journal of the %s run', (name) => {
    const read = readJournalFile(journals[name]!);
    const summary = summariseJournal(read);
    const resume = replayJournal(read);
    const report = reportData(read);
    if (!summary.ok || !resume.ok || !report.ok) throw new Error('a journal of a run that ran does not fold');
    const [run, state, data] = [summary.value, resume.value, report.value];

    // The report's summary is the summary; its spend is the one a resume's cap counts.
    expect(data.summary).toEqual(run);
    expect(state.committedUsd).toBe(run.cost.committed_usd);
    // The first run paid for its pictures; the second had them from the step cache.
    expect(run.cost.committed_usd > 0).toBe(name === 'first');
    expect(data.totals.tasks).toBe(run.steps.reduce((n, s) => n + s.tasks.length, 0));
    const hits = run.steps.reduce((n, s) => n + s.cached.length, 0);
    expect(data.totals.cacheHits).toBe(hits > 0 ? hits : null);

    expect(data.steps.map((s) => [s.step, s.status])).toEqual(run.steps.map((s) => [s.step, s.status]));
    for (const step of run.steps) {
      const shown = data.steps.find((s) => s.row === step.row && s.step === step.step)!;
      const where = `${name}: ${step.step}`;
      const withStatus = (status: string) => indices(shown.items.filter((i) => i.status === status));
      // Failed, skipped and cached items: the same in the report as in the summary.
      expect(withStatus('failed'), where).toEqual(indices(step.failed_items));
      expect(withStatus('skipped'), where).toEqual(indices(step.skipped_items));
      expect(indices(shown.items.filter((i) => i.cached)), where).toEqual([...step.cached].sort());
      // The items the report shows as done are those a resume keeps; the others it runs again.
      const kept = [...state.finishedItems.keys()].filter((key) => key.startsWith(`${step.row}/${step.step}/`));
      expect(withStatus('succeeded'), where).toEqual(kept.map((key) => Number(key.split('/')[2])).sort());
      // A step is done for a resume when it succeeded with no item left out.
      const done = step.status === 'succeeded' && !step.skipped_items?.length;
      expect(state.finishedSteps.has(`${step.row}/${step.step}`), where).toBe(done);
    }
    expect(state.submittedTasks.size).toBe(0);
  });

  it('covers what the journals hold: a failed item, the item it skipped, and cached items', () => {
    const cached = summariseJournal(readJournalFile(journals.cached!));
    if (!cached.ok) throw new Error(cached.error.message);
    const byStep = Object.fromEntries(cached.value.steps.map((s) => [s.step, s]));
    expect(indices(byStep.make!.failed_items)).toEqual([2]);
    expect(indices(byStep.use!.skipped_items)).toEqual([2]);
    expect([...byStep.pics!.cached].sort()).toEqual([0, 1]);
    expect([...byStep.make!.cached].sort()).toEqual([0, 1, 3]);
  });
});
