import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { runPlan } from '../../src/engine/engine.js';
import { ConsoleReporter } from '../../src/engine/reporter.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import type { JournalEvent } from '../../src/store/journal.js';
import { replay } from '../../src/store/replay.js';
import { summarise } from '../../src/store/summary.js';
import { engineFor } from '../support/engine.js';

const SUBMIT = 'POST /api/v1/{provider}/{model_id}';
const RECIPE = `version: 1
name: ten-images
settings: { concurrency: 4 }
steps:
  image:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    retry: { attempts: 2, backoff: 10ms }
    with: { prompt: "lighthouse number \${{ item }}" }
`;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const consoleReport = () => {
  const out = { text: '' };
  return {
    out,
    report: new ConsoleReporter(
      (text) => (out.text += text),
      () => Date.now(),
    ),
  };
};

/** `image[3]` for each item whose request left but never got a task id. */
function unknownItems(events: JournalEvent[]): string[] {
  const answered = new Set(
    events.flatMap((e) => (e.type === 'task-submitted' || e.type === 'submission-refused' ? [e.index] : [])),
  );
  return events.flatMap((e) => (e.type === 'request-sent' && !answered.has(e.index) ? [`image[${e.index}]`] : []));
}

describe('several submissions with unknown outcomes', () => {
  it('names every one of them in the step failure, the console, the journal and runs show; a resume says the answer was lost, not that the run stopped', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    // Three submissions are created and charged, but their answers never arrive.
    gateway.injectFault({ kind: 'drop-after', route: SUBMIT, times: 3 });
    const first = consoleReport();
    const engine = await engineFor(RECIPE, gateway, systemClock, { report: first.report });
    const result = await runPlan(engine.ctx);
    const step = result.rows[0]!.steps.image!;
    // The engine's own events, behind the run-started record the command line writes.
    const events: JournalEvent[] = [
      { type: 'run-started', t: 0, run_id: 'r', recipe: 'x', name: 'x', rows: [{}], sets: [], batch: null },
      ...engine.events(),
    ];
    const unknown = unknownItems(events);
    expect(unknown).toHaveLength(3);
    expect(step.status).toBe('failed');
    expect(step.failure).toMatchObject({ reason: 'outcome-unknown', outcomeUnknown: true });
    expect(step.failure!.message).toMatch(/^3 submissions have unknown outcomes: /);
    for (const item of unknown) expect(step.failure!.message).toContain(item);
    expect(step.failure!.message).toContain('--resubmit-unknown');
    expect(first.out.text).toContain(`✗ image failed: ${step.failure!.message}`);
    const failedEvents = events.filter((e) => e.type === 'step-failed');
    expect(failedEvents).toEqual([
      expect.objectContaining({ reason: 'outcome-unknown', message: step.failure!.message, outcome_unknown: true }),
    ]);
    expect(summarise(events).steps[0]).toMatchObject({
      status: 'failed',
      error: { message: step.failure!.message, outcome_unknown: true },
    });
    // No retry of the step: the unknown items were not sent again (10 submissions, 3 of them lost).
    expect(gateway.stats().requests.by_route[SUBMIT]).toBe(10);
    expect(events.filter((e) => e.type === 'submission-unknown')).toHaveLength(3);
    await engine.close();

    const second = consoleReport();
    const resumed = await engineFor(RECIPE, gateway, systemClock, { report: second.report });
    resumed.ctx.resume = replay(events);
    const again = await runPlan(resumed.ctx);
    const message = again.rows[0]!.steps.image!.failure!.message;
    expect(message).toMatch(/^3 submissions have unknown outcomes: /);
    for (const item of unknown) expect(message).toContain(item);
    expect(message).toContain(
      'got no certain answer in the earlier run (the connection closed before the answer was complete',
    );
    expect(message).not.toContain('was in flight when the run stopped');
    expect(second.out.text).toContain(message);
    // Nothing was sent again: the seven done items are kept, the three unknown ones wait for the user.
    expect(gateway.stats().requests.by_route[SUBMIT]).toBe(10);
    await resumed.close();
  });
});

const TEXT_ROUTES = ['POST /llm/v1/chat/completions', 'POST /llm/v1/responses', 'POST /llm/v1/messages'];
const TEXT_RECIPE = `version: 1
name: three-briefs
steps:
  brief:
    uses: llm
    for_each: [tea, coffee, cocoa]
    with: { model: vendor-x/writer-1, prompt: "a brief on \${{ item }}" }
`;
const textCalls = (gw: LocalGateway) =>
  TEXT_ROUTES.reduce((sum, route) => sum + (gw.stats().requests.by_route[route] ?? 0), 0);

describe('a text call whose answer was lost', () => {
  it('is journaled before it leaves and when it ends; a resume does not call again unless told to', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    // The first call is answered (and billed) but its answer never arrives.
    for (const route of TEXT_ROUTES) gateway.injectFault({ kind: 'drop-after', route, times: 1 });
    const engine = await engineFor(TEXT_RECIPE, gateway, systemClock);
    const result = await runPlan(engine.ctx);
    expect(result.rows[0]!.steps.brief!.failure).toMatchObject({ reason: 'outcome-unknown' });
    const events: JournalEvent[] = [
      { type: 'run-started', t: 0, run_id: 'r', recipe: 'x', name: 'x', rows: [{}], sets: [], batch: null },
      ...engine.events(),
    ];
    const sent = events.filter((e) => e.type === 'call-sent');
    const ended = events.filter((e) => e.type === 'call-ended');
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatchObject({ model: 'vendor-x/writer-1' });
    // What each call asked, as a model task's input is kept: the prompt a lost answer was for.
    expect(sent.map((e) => (e.type === 'call-sent' ? e.input?.prompt : undefined)).sort()).toEqual([
      'a brief on cocoa',
      'a brief on coffee',
      'a brief on tea',
    ]);
    expect(ended.map((e) => e.outcome).sort()).toEqual(['answered', 'answered', 'unknown']);
    const lost = ended.find((e) => e.outcome === 'unknown')!;
    expect(lost.message).toMatch(/connection closed/);
    // Each call's line is in the journal before its end's.
    for (const end of ended)
      expect(events.indexOf(sent.find((s) => s.request === end.request)!)).toBeLessThan(events.indexOf(end));
    expect(textCalls(gateway)).toBe(3);
    await engine.close();

    const resumed = await engineFor(TEXT_RECIPE, gateway, systemClock);
    resumed.ctx.resume = replay(events);
    const again = await runPlan(resumed.ctx);
    const failure = again.rows[0]!.steps.brief!.failure!;
    expect(failure).toMatchObject({ reason: 'outcome-unknown', outcomeUnknown: true });
    expect(failure.message).toContain(
      `the call of brief[${lost.index}] to vendor-x/writer-1 got no certain answer in the earlier run`,
    );
    expect(failure.message).toContain('--resubmit-unknown');
    // Before the fix the resume called the model again: a second bill for the same brief.
    expect(textCalls(gateway)).toBe(3);
    await resumed.close();

    const told = await engineFor(TEXT_RECIPE, gateway, systemClock);
    told.ctx.resume = replay(events);
    told.ctx.resubmitUnknown = true;
    const sentAgain = await runPlan(told.ctx);
    expect(sentAgain.status).toBe('succeeded');
    expect(textCalls(gateway)).toBe(4);
    await told.close();
  });

  it('a call in flight when the run was killed is not sent again by a resume', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    const engine = await engineFor(TEXT_RECIPE, gateway, systemClock);
    await runPlan(engine.ctx);
    // The journal of a run killed while brief[1]'s call was on the wire: its end never written.
    const events: JournalEvent[] = [
      { type: 'run-started', t: 0, run_id: 'r', recipe: 'x', name: 'x', rows: [{}], sets: [], batch: null },
      ...engine
        .events()
        .filter(
          (e) =>
            !(e.type === 'call-ended' && e.index === 1) &&
            !(e.type.startsWith('item-') && 'index' in e && e.index === 1),
        )
        .filter((e) => !e.type.startsWith('step-f') && !e.type.startsWith('run-')),
    ];
    await engine.close();
    const resumed = await engineFor(TEXT_RECIPE, gateway, systemClock);
    resumed.ctx.resume = replay(events);
    const again = await runPlan(resumed.ctx);
    expect(again.rows[0]!.steps.brief!.failure!.message).toContain(
      'the call of brief[1] to vendor-x/writer-1 was in flight when the run stopped; it may have been answered, and billed',
    );
    expect(textCalls(gateway)).toBe(3);
    await resumed.close();
  });
});
