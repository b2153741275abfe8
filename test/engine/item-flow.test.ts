import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleReporter } from '../../src/engine/reporter.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import type { JournalEvent } from '../../src/store/journal.js';
import { replay } from '../../src/store/replay.js';
import { summarise } from '../../src/store/summary.js';
import { engineFor } from '../support/engine.js';
import { ManualClock } from '../support/manual-clock.js';
import { runPlanSkippingTime } from '../support/run-engine.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';
const COLOURS = Array.from({ length: 20 }, (_, i) => `colour-${i}`);

/** A chain per item: text-to-image → an edit of the image → a video restyled after the edit. */
const chain = (extra = '', settings = '', colours = COLOURS) => `version: 1
name: chain
settings: { concurrency: 6${settings} }
inputs:
  colours: { type: array, default: ${JSON.stringify(colours)} }
steps:
  t2i:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ inputs.colours }}
    retry: { attempts: 0 }
    with: { prompt: "a \${{ item }} background" }
  edit:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs[*].images[0].url }}
    with: { prompt: add a badge, image: ["\${{ item }}"], size: 1024x1024 }
  v2v:
    uses: vendor-b/vendor-b-2.0-mini-v2v
    for_each: \${{ steps.edit.outputs }}
    with:
      video_urls: [./assets/ride.mp4]
      prompt: Restyle the ride in the look of [Image 1].
      reference_images: ["\${{ item.images[0].url }}"]
      duration: 5
      resolution: 720p
${extra}`;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

type Submitted = Extract<JournalEvent, { type: 'task-submitted' }>;
type ItemFinished = Extract<JournalEvent, { type: 'item-finished' }>;

/** The journal's first line, which the command line writes before the engine's events. */
const RUN_STARTED: JournalEvent = {
  type: 'run-started',
  t: 0,
  run_id: 'r',
  recipe: 'x',
  name: 'x',
  rows: [{}],
  sets: [],
  batch: null,
};

/** Runs `recipe` to its end on the test's gateway and `clock`; its result and the engine's events. */
async function runOnGateway(
  recipe: string,
  clock: ManualClock,
  options: { report?: ConsoleReporter; resume?: JournalEvent[] } = {},
) {
  const engine = await engineFor(recipe, gateway!, clock, options.report ? { report: options.report } : {});
  if (options.resume) engine.ctx.resume = replay(options.resume);
  const result = await runPlanSkippingTime(engine, gateway!, clock);
  const events = engine.events();
  await engine.close();
  return { result, events };
}

async function runChain(recipe: string, failItem?: number) {
  const clock = new ManualClock();
  // Jittered latencies: items finish out of order, as they do on a real gateway.
  gateway = await startLocalGateway({ clock, latencyScale: 0.2, latencyJitter: 0.5, seed: 19, useFfmpeg: false });
  if (failItem !== undefined)
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT, body_contains: `colour-${failItem} ` });
  const lines: string[] = [];
  const report = new ConsoleReporter(
    (text) => lines.push(text),
    () => clock.now(),
  );
  return { ...(await runOnGateway(recipe, clock, { report })), console: lines.join('') };
}

const submissions = (events: JournalEvent[], step: string) =>
  events.filter((e): e is Submitted => e.type === 'task-submitted' && e.step === step);
const finishedItems = (events: JournalEvent[], step: string) =>
  events.filter((e): e is ItemFinished => e.type === 'item-finished' && e.step === step);

describe('items flow one by one through a chain', () => {
  it('submits edit[i] as soon as t2i[i] is done, before the last t2i item finishes', async () => {
    const { result, events } = await runChain(chain());
    expect(result.status).toBe('succeeded');
    const t2iDone = finishedItems(events, 't2i');
    expect(t2iDone).toHaveLength(20);
    const lastT2i = events.indexOf(t2iDone.at(-1)!);
    const edits = submissions(events, 'edit');
    expect(edits).toHaveLength(20);
    expect(events.indexOf(edits[0]!)).toBeLessThan(lastT2i);
    // And a video starts before the last edit is done.
    expect(events.indexOf(submissions(events, 'v2v')[0]!)).toBeLessThan(
      events.indexOf(finishedItems(events, 'edit').at(-1)!),
    );
    // Item i of each step comes from item i upstream: edit[i] edits t2i[i]'s image.
    for (const edit of edits) {
      const image = (
        finishedItems(events, 't2i').find((e) => e.index === edit.index)!.outputs as { images: Array<{ url: string }> }
      ).images[0]!.url;
      expect(edit.input).toMatchObject({ image: [image] });
    }
    expect((result.rows[0]!.steps.v2v!.outputs as unknown[]).every((o) => o !== null)).toBe(true);
    // A flowing step starts with its first item, not with its upstream step: its start and its time
    // (TOOK, the report's bar) are its own.
    const started = (step: string) => events.find((e) => e.type === 'step-started' && e.step === step)!;
    expect(events.indexOf(started('edit'))).toBeGreaterThan(events.indexOf(t2iDone[0]!));
    expect(events.indexOf(started('edit'))).toBeLessThan(events.indexOf(edits[0]!));
    expect(started('edit').t).toBe(t2iDone[0]!.t);
    const v2v = result.rows[0]!.steps.v2v!;
    const firstEdit = finishedItems(events, 'edit')[0]!;
    expect(v2v.ms).toBe(events.findLast((e) => e.type === 'step-finished' && e.step === 'v2v')!.t - firstEdit.t);
  });

  it('keeps the barrier with settings.item_flow: false: no edit before the last t2i item', async () => {
    const { result, events } = await runChain(chain('', ', item_flow: false'));
    expect(result.status).toBe('succeeded');
    const lastT2i = events.indexOf(finishedItems(events, 't2i').at(-1)!);
    expect(events.indexOf(submissions(events, 'edit')[0]!)).toBeGreaterThan(lastT2i);
  });

  it('fails t2i[3] alone: 19 chains finish, edit[3] and v2v[3] are skipped and named, and the run fails', async () => {
    const { result, events, console } = await runChain(chain(), 3);
    expect(result.status).toBe('failed');
    const { t2i, edit, v2v } = result.rows[0]!.steps;
    expect(t2i).toMatchObject({ status: 'failed', failure: { reason: 'invalid-parameters' } });
    expect(t2i!.failedItems!.map((f) => f.index)).toEqual([3]);
    for (const step of [edit!, v2v!]) {
      expect(step.status).toBe('succeeded');
      expect(step.skippedItems).toEqual([{ index: 3, reason: 't2i[3] failed' }]);
      const outputs = step.outputs as unknown[];
      expect(outputs.filter((o) => o !== null)).toHaveLength(19);
      expect(outputs[3]).toBeNull();
    }
    expect(finishedItems(events, 'v2v')).toHaveLength(19);
    expect(submissions(events, 'edit').map((e) => e.index)).not.toContain(3);
    expect(events).toContainEqual(expect.objectContaining({ type: 'item-failed', step: 't2i', index: 3 }));
    // The refusal carries what was asked, for the report's card of t2i[3].
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'submission-refused',
        step: 't2i',
        index: 3,
        input: expect.objectContaining({ prompt: 'a colour-3 background' }),
      }),
    );
    for (const step of ['edit', 'v2v'])
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'item-skipped', step, index: 3, reason: 't2i[3] failed' }),
      );
    expect(console).toContain('– edit[3] skipped: t2i[3] failed\n');
    expect(console).toContain('– v2v[3] skipped: t2i[3] failed\n');
    // The console names the failure when it happens, before the skips it causes and the step's end.
    const failedLine = console.indexOf('✗ t2i[3] failed: submission of t2i[3]');
    expect(failedLine).toBeGreaterThanOrEqual(0);
    expect(failedLine).toBeLessThan(console.indexOf('– edit[3] skipped'));
    expect(failedLine).toBeLessThan(console.indexOf('✗ t2i failed'));
    // Told as soon as t2i gave up on item 3 (no retry can follow), while other t2i items still ran:
    // not when the last of them ended.
    const lastT2iEnd = events.map((e) => e.type === 'item-finished' && e.step === 't2i').lastIndexOf(true);
    const told = (type: string, step: string) =>
      events.findIndex((e) => e.type === type && 'step' in e && e.step === step && 'index' in e && e.index === 3);
    expect(told('item-failed', 't2i')).toBeLessThan(lastT2iEnd);
    expect(told('item-skipped', 'v2v')).toBeLessThan(lastT2iEnd);
    expect(events.filter((e) => e.type === 'item-failed')).toHaveLength(1);
    // What `runs show` reads: the journal's summary names the failed and the skipped items.
    const summary = summarise([RUN_STARTED, ...events]);
    const record = (step: string) => summary.steps.find((s) => s.step === step)!;
    expect(record('t2i')).toMatchObject({ status: 'failed', failed_items: [{ index: 3 }] });
    expect(record('edit')).toMatchObject({
      status: 'succeeded',
      skipped_items: [{ index: 3, reason: 't2i[3] failed' }],
    });
    expect(record('v2v')).toMatchObject({
      status: 'succeeded',
      skipped_items: [{ index: 3, reason: 't2i[3] failed' }],
    });
  });

  it('with continue_on_error on t2i, skips the failed item’s chain and the run succeeds', async () => {
    const recipe = `${chain().replace('retry: { attempts: 0 }', 'retry: { attempts: 0 }\n    continue_on_error: true')}outputs:\n  images: \${{ steps.t2i.outputs[*].images[0].url }}\n`;
    const { result } = await runChain(recipe, 3);
    expect(result.status).toBe('succeeded');
    expect(result.rows[0]!.steps.v2v!.skippedItems).toEqual([{ index: 3, reason: 't2i[3] failed' }]);
    // t2i failed, and keeps the 19 images it made (paid for) in their places: a whole null had hidden them.
    const t2i = result.rows[0]!.steps.t2i!;
    expect(t2i.status).toBe('failed');
    const outputs = t2i.outputs as unknown[];
    expect(outputs).toHaveLength(20);
    expect(outputs[3]).toBeNull();
    expect(outputs.filter((o) => o !== null)).toHaveLength(19);
    // And the recipe's outputs read them.
    const images = result.rows[0]!.outputs.images as unknown[];
    expect(images).toHaveLength(20);
    expect(images[3]).toBeNull();
    expect(images.filter((url) => typeof url === 'string')).toHaveLength(19);
  });

  it('a step that iterates t2i’s items but reads t2i whole waits for all of it, and still skips the failed item’s own', async () => {
    // `length(...)` reads t2i whole: the step waits for its last item. Its item 3 is still t2i[3]'s,
    // which failed under continue_on_error: skipped and named, not run on the null it left.
    const numbered = `  numbered:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs[*].images[0].url }}
    with: { prompt: "write \${{ index }} of \${{ length(steps.t2i.outputs) }}", image: ["\${{ item }}"], size: 1024x1024 }
`;
    const recipe = chain(numbered).replace(
      'retry: { attempts: 0 }',
      'retry: { attempts: 0 }\n    continue_on_error: true',
    );
    const { result, events } = await runChain(recipe, 3);
    expect(result.status).toBe('succeeded');
    const step = result.rows[0]!.steps.numbered!;
    expect(step.status).toBe('succeeded');
    expect(step.skippedItems).toEqual([{ index: 3, reason: 't2i[3] failed' }]);
    expect(submissions(events, 'numbered')).toHaveLength(19);
    // It waited for the whole of t2i: its first submission after t2i's last item ended.
    const lastT2i = events.indexOf(finishedItems(events, 't2i').at(-1)!);
    expect(events.indexOf(submissions(events, 'numbered')[0]!)).toBeGreaterThan(lastT2i);
  });

  it('retries a failed item from its own failure, while the step’s other items still run; a 400 beside it is not sent again', async () => {
    const clock = new ManualClock();
    // About three tasks in ten end failed (retried); colour-5's submission is refused (a 400 is not).
    gateway = await startLocalGateway({
      clock,
      latencyScale: 0.2,
      latencyJitter: 0.5,
      seed: 23,
      failRate: 0.3,
      useFfmpeg: false,
    });
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT, body_contains: 'colour-5 ' });
    const recipe = chain()
      .replace('retry: { attempts: 0 }', 'retry: { attempts: 2, backoff: 10ms }')
      .split('  edit:')[0]!;
    const { events } = await runOnGateway(recipe, clock);
    const at = (e: JournalEvent) => events.indexOf(e);
    // The 400 was sent once, though other items of the step were retried.
    expect(events.filter((e) => e.type === 'request-sent' && e.index === 5)).toHaveLength(1);
    const submitted = events.filter((e): e is Submitted => e.type === 'task-submitted');
    const firstOf = new Map<number, Submitted>();
    for (const e of submitted) if (!firstOf.has(e.index)) firstOf.set(e.index, e);
    const retries = submitted.filter((e) => firstOf.get(e.index) !== e);
    expect(retries.length).toBeGreaterThan(0);
    // A first attempt's end: the end of a task whose id is its item's first.
    const firstIds = new Set([...firstOf.values()].map((e) => e.task_id));
    const firstEnds = events.filter((e) => e.type === 'task-finished' && firstIds.has(e.task_id));
    // The first retry went before the first attempts were all over, not after the step's whole first pass.
    expect(at(retries[0]!)).toBeLessThan(Math.max(...firstEnds.map(at)));
  });

  it('routes a failed image to a fallback per item: an if that reads the upstream item’s outcome', async () => {
    const fallback = `  fallback:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.t2i.outputs }}
    if: \${{ failure() && steps.t2i.outcome == 'failure' }}
    with: { prompt: "a plain background for item \${{ index }}" }
`;
    const { result, events } = await runChain(chain(fallback), 3);
    const steps = result.rows[0]!.steps;
    expect(submissions(events, 'fallback').map((e) => e.index)).toEqual([3]);
    expect(steps.fallback!.skippedItems).toHaveLength(19);
    expect(steps.fallback!.skippedItems![0]).toEqual({ index: 0, reason: 'its condition is false' });
    expect((steps.fallback!.outputs as unknown[])[3]).not.toBeNull();
  });

  it('with continue_on_error, routes a failed image to a fallback whose if reads the outcome alone, and succeeds', async () => {
    // GitHub Actions' pattern: the failure concludes success, so the implicit success() holds and
    // the item's if decides. A step without an if still skips the item, which has no input.
    const fallback = `  fallback:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.t2i.outputs }}
    if: \${{ steps.t2i.outcome == 'failure' }}
    with: { prompt: "a plain background for item \${{ index }}" }
  captioned:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs }}
    if: \${{ index >= 0 }}
    with: { prompt: a caption, image: ["\${{ item.images[0].url }}"], size: 1024x1024 }
`;
    // Six chains are enough here: what matters is item 3's.
    const recipe = chain(fallback, '', COLOURS.slice(0, 6)).replace(
      'retry: { attempts: 0 }',
      'retry: { attempts: 0 }\n    continue_on_error: true',
    );
    const { result, events } = await runChain(recipe, 3);
    expect(result.status).toBe('succeeded');
    const steps = result.rows[0]!.steps;
    expect(submissions(events, 'fallback').map((e) => e.index)).toEqual([3]);
    expect((steps.fallback!.outputs as unknown[])[3]).not.toBeNull();
    expect(steps.edit!.skippedItems).toEqual([{ index: 3, reason: 't2i[3] failed' }]);
    // An if that reads no outcome does not decide for a failed item: no paid call on its null.
    expect(submissions(events, 'captioned').map((e) => e.index)).not.toContain(3);
    expect(steps.captioned!.skippedItems).toEqual([{ index: 3, reason: 't2i[3] failed' }]);
  });

  it('reads the outcome of an item further up its chain per item, without waiting for that whole step', async () => {
    const again = `  again:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.edit.outputs }}
    if: \${{ always() && steps.t2i.outcome == 'success' }}
    with: { prompt: once more, image: ["\${{ item.images[0].url }}"], size: 1024x1024 }
`;
    const { result, events } = await runChain(chain(again), 3);
    expect(result.status).toBe('failed');
    const lastT2i = events.indexOf(finishedItems(events, 't2i').at(-1)!);
    const agains = submissions(events, 'again');
    expect(agains.map((e) => e.index).sort((a, b) => a - b)).toEqual(COLOURS.map((_, i) => i).filter((i) => i !== 3));
    expect(Math.min(...agains.map((e) => events.indexOf(e)))).toBeLessThan(lastT2i);
    // again[3]'s own t2i item failed: its if, read for its lineage, is false.
    expect(result.rows[0]!.steps.again!.skippedItems).toEqual([{ index: 3, reason: 'its condition is false' }]);
  });

  it('waits for all of t2i in a step that reads steps.t2i.outputs as a whole', async () => {
    const sheet = `  sheet:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs[*].images[0].url }}
    with: { prompt: "one of \${{ length(steps.t2i.outputs) }}", image: ["\${{ item }}"], size: 1024x1024 }
`;
    const { result, events } = await runChain(chain(sheet));
    expect(result.status).toBe('succeeded');
    const lastT2i = events.indexOf(finishedItems(events, 't2i').at(-1)!);
    const sheets = submissions(events, 'sheet');
    expect(sheets).toHaveLength(20);
    expect(Math.min(...sheets.map((e) => events.indexOf(e)))).toBeGreaterThan(lastT2i);
    expect(sheets[0]!.input).toMatchObject({ prompt: 'one of 20' });
  });

  it('evaluates an item-by-item step’s if per item, with item; when it holds for none, the step is skipped', async () => {
    const recipe = (condition: string) => `version: 1
name: conditions
steps:
  make: { for_each: [a, b, c], run: ["echo", "\${{ item }}"] }
  use: { for_each: "\${{ steps.make.outputs[*].stdout }}", if: "${condition}", run: ["echo", "\${{ item }}!"] }
  after: { run: ["echo", "\${{ join(steps.use.outputs[*].stdout, ',') }}"] }
`;
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const { result: first } = await runOnGateway(recipe("${{ item != 'b' }}"), clock);
    expect(first.status).toBe('succeeded');
    expect(first.rows[0]!.steps.use!.skippedItems).toEqual([{ index: 1, reason: 'its condition is false' }]);
    expect(first.rows[0]!.steps.after!.outputs).toMatchObject({ stdout: 'a!,,c!' });
    const { result: second } = await runOnGateway(recipe("${{ item == 'z' }}"), clock);
    expect(second.status).toBe('succeeded');
    expect(second.rows[0]!.steps.use).toMatchObject({
      status: 'skipped',
      reason: 'its condition is false for every item',
    });
    expect(second.rows[0]!.steps.after).toMatchObject({ status: 'skipped', reason: 'it needs use, which was skipped' });
  });

  it('skips a step none of whose items ran, naming the first upstream failure', async () => {
    const recipe = `version: 1
name: all-failed
steps:
  make: { for_each: [a, b], run: ["node", "-e", "process.exit(2)"] }
  use: { for_each: "\${{ steps.make.outputs }}", run: ["echo", "\${{ item.stdout }}"] }
`;
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const { result } = await runOnGateway(recipe, clock);
    expect(result.status).toBe('failed');
    expect(result.rows[0]!.steps.use).toMatchObject({
      status: 'skipped',
      reason: 'every item was skipped (the first: make[0] failed)',
      skippedItems: [
        { index: 0, reason: 'make[0] failed' },
        { index: 1, reason: 'make[1] failed' },
      ],
    });
  });

  it('gives an item’s command the outcome of a whole step it reads there, and its if that of its own ancestor', async () => {
    const recipe = `version: 1
name: outcomes
steps:
  src: { for_each: [a, b], run: ["node", "-e", "process.exit(process.argv[1] === 'b' ? 2 : 0)", "\${{ item }}"] }
  mid: { for_each: "\${{ steps.src.outputs }}", run: ["echo", "mid"] }
  tell:
    for_each: \${{ steps.mid.outputs }}
    if: \${{ always() && steps.src.outcome == 'success' }}
    run: ["echo", "src as a whole: \${{ steps.src.outcome }}"]
`;
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const { result } = await runOnGateway(recipe, clock);
    expect(result.status).toBe('failed');
    const tell = result.rows[0]!.steps.tell!;
    // tell[1]'s own src item failed: its if, read for its lineage, is false.
    expect(tell.skippedItems).toEqual([{ index: 1, reason: 'its condition is false' }]);
    // tell[0]'s command read steps.src.outcome, so it waited for all of src and got src's outcome.
    expect((tell.outputs as Array<{ stdout: string } | null>)[0]!.stdout.trim()).toBe('src as a whole: failure');
  });
});

/**
 * Ten images, each followed by its own video (35 s of processing at 5 s long; 65 s for item 3 at
 * 15 s), two tasks at a time: the videos together take minutes, each one well under its limit.
 */
const TIMED = `version: 1
name: timed
settings: { concurrency: 2 }
inputs:
  colours: { type: array, default: ${JSON.stringify(COLOURS.slice(0, 10))} }
steps:
  t2i:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} background" }
  v2v:
    uses: vendor-b/vendor-b-2.0-mini-v2v
    for_each: \${{ steps.t2i.outputs }}
    timeout: 50s
    with:
      video_urls: [./assets/ride.mp4]
      prompt: Restyle the ride in the look of [Image 1].
      reference_images: ["\${{ item.images[0].url }}"]
      duration: \${{ index == 3 && 15 || 5 }}
      resolution: 720p
`;

describe('the time limit of a step whose items flow', () => {
  it('limits each item from its own start: only the item that runs past it fails', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ clock, latencyScale: 1, latencyJitter: 0, seed: 19, useFfmpeg: false });
    const started = clock.now();
    const { result, events } = await runOnGateway(TIMED, clock);
    // Far past one limit from the step's start: a limit on the whole step would have failed most items.
    expect(clock.now() - started).toBeGreaterThan(150_000);
    const v2v = result.rows[0]!.steps.v2v!;
    expect(v2v.status).toBe('failed');
    expect(v2v.failedItems!.map((f) => f.index)).toEqual([3]);
    expect(v2v.failedItems![0]!.failure.message).toContain('v2v[3] took longer than its time limit of 50s');
    expect(
      finishedItems(events, 'v2v')
        .map((e) => e.index)
        .sort((a, b) => a - b),
    ).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9]);
  });
});

/** Three heroes, the first a 1k image (3.5 s) and the others 2k (5.5 s); an edit of the first alone. */
const CHOSEN = (settings = '') => `version: 1
name: chosen
settings: { concurrency: 4${settings} }
steps:
  hero:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [{ p: "hero zero", r: 1k }, { p: "hero one", r: 2k }, { p: "hero two", r: 2k }]
    retry: { attempts: 0 }
    with: { prompt: "\${{ item.p }}", resolution: "\${{ item.r }}" }
  branded:
    uses: vendor-b/vendor-b-5.0-lite-edit
    with: { prompt: add the logo, image: ["\${{ steps.hero.outputs[0].images[0].url }}"], size: 1024x1024 }
`;

/** The clock of the gateway a test started: a resume runs on the same gateway and clock. */
let chosenClock = new ManualClock();

async function runChosen(recipe: string, failPrompt?: string, resume?: JournalEvent[]) {
  if (!gateway) {
    chosenClock = new ManualClock();
    gateway = await startLocalGateway({
      clock: chosenClock,
      latencyScale: 1,
      latencyJitter: 0,
      seed: 7,
      useFfmpeg: false,
    });
  }
  if (failPrompt !== undefined)
    gateway.injectFault({ kind: 'status', status: 400, route: SUBMIT, body_contains: failPrompt, times: 1 });
  return runOnGateway(recipe, chosenClock, resume ? { resume } : {});
}

describe('a step that reads chosen items of another: branded ← hero[0]', () => {
  it('is submitted once hero[0] is done, before the other heroes finish', async () => {
    const { result, events } = await runChosen(CHOSEN());
    expect(result.status).toBe('succeeded');
    const branded = submissions(events, 'branded');
    expect(branded).toHaveLength(1);
    const heroes = finishedItems(events, 'hero');
    // hero[0] (1K) ends first; the two 2K heroes end together, in either order.
    expect(heroes.map((e) => e.index).sort()).toEqual([0, 1, 2]);
    expect(heroes[0]!.index).toBe(0);
    expect(events.indexOf(branded[0]!)).toBeGreaterThan(events.indexOf(heroes[0]!));
    expect(events.indexOf(branded[0]!)).toBeLessThan(events.indexOf(heroes[1]!));
    const image = (heroes[0]!.outputs as { images: Array<{ url: string }> }).images[0]!.url;
    expect(branded[0]!.input).toMatchObject({ image: [image] });
  });

  it('keeps the barrier with settings.item_flow: false: no edit before the last hero', async () => {
    const { events } = await runChosen(CHOSEN(', item_flow: false'));
    const lastHero = events.indexOf(finishedItems(events, 'hero').at(-1)!);
    expect(events.indexOf(submissions(events, 'branded')[0]!)).toBeGreaterThan(lastHero);
  });

  it('runs when another hero fails (the run still fails), and is cancelled when its own hero[0] fails', async () => {
    const other = await runChosen(CHOSEN(), 'hero one');
    expect(other.result.status).toBe('failed');
    expect(other.result.rows[0]!.steps.hero!.failedItems!.map((f) => f.index)).toEqual([1]);
    expect(other.result.rows[0]!.steps.branded).toMatchObject({ status: 'succeeded' });
    await gateway?.close();
    gateway = undefined;
    const own = await runChosen(CHOSEN(), 'hero zero');
    expect(own.result.status).toBe('failed');
    expect(own.result.rows[0]!.steps.branded).toMatchObject({
      status: 'cancelled',
      reason: 'it needs hero, which failed',
    });
    expect(submissions(own.events, 'branded')).toHaveLength(0);
  });

  it('resumes the chain that did not finish: hero[0] again, then the edit of it, and no other hero', async () => {
    const first = await runChosen(CHOSEN(), 'hero zero');
    expect(first.result.rows[0]!.steps.branded!.status).toBe('cancelled');

    const resumed = await runChosen(CHOSEN(), undefined, [RUN_STARTED, ...first.events]);
    expect(resumed.result.status).toBe('succeeded');
    expect(submissions(resumed.events, 'hero').map((e) => e.index)).toEqual([0]);
    const branded = submissions(resumed.events, 'branded');
    expect(branded).toHaveLength(1);
    const hero0 = finishedItems(resumed.events, 'hero')[0]!;
    expect(hero0.index).toBe(0);
    expect(branded[0]!.input).toMatchObject({
      image: [(hero0.outputs as { images: Array<{ url: string }> }).images[0]!.url],
    });
  });
});

describe('a resume of an item whose task ended failed', () => {
  it('submits the item afresh, not reading the failed task again, even with no retries left', async () => {
    // The second picture's address answers 404 until the test mends it: its edit's task ends failed.
    let mended = false;
    const logo = readFileSync(fileURLToPath(new URL('../../recipes/assets/logo.png', import.meta.url)));
    const pictures = createServer((request, response) => {
      if (request.url === '/flaky.png' && !mended) response.writeHead(404).end();
      else response.writeHead(200, { 'Content-Type': 'image/png' }).end(logo);
    });
    await new Promise<void>((resolve) => pictures.listen(0, '127.0.0.1', resolve));
    const { port } = pictures.address() as AddressInfo;
    try {
      const recipe = `version: 1
name: frames
steps:
  edit:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: [steady, flaky]
    retry: { attempts: 0 }
    with: { prompt: frame it, image: ["http://127.0.0.1:${port}/\${{ item }}.png"], size: 1024x1024 }
`;
      const clock = new ManualClock();
      gateway = await startLocalGateway({ clock, latencyScale: 0.1, latencyJitter: 0, seed: 5, useFfmpeg: false });
      const first = await runOnGateway(recipe, clock);
      expect(first.result.status).toBe('failed');
      const failedTask = first.events.find((e) => e.type === 'task-finished' && e.index === 1);
      expect(failedTask).toMatchObject({ status: 'failed' });

      mended = true;
      const lines: string[] = [];
      const report = new ConsoleReporter(
        (text) => lines.push(text),
        () => clock.now(),
      );
      const resumed = await runOnGateway(recipe, clock, { report, resume: [RUN_STARTED, ...first.events] });
      expect(resumed.result.status).toBe('succeeded');
      // The console counts the item done before the resume apart: one of the two runs again.
      expect(lines).toContain('▶ edit (2 runs, 1 done before the resume)\n');
      const sent = submissions(resumed.events, 'edit');
      expect(sent.map((e) => e.index)).toEqual([1]);
      expect(sent[0]!.task_id).not.toBe((failedTask as { task_id: string }).task_id);
    } finally {
      await new Promise((resolve) => pictures.close(resolve));
    }
  });
});
