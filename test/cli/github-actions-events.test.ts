import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { FailedStepAnnotations } from '../../src/report/failed-step-annotations.js';
import { runPlan } from '../../src/engine/engine.js';
import { type EngineEvent, eventStream } from '../../src/engine/events.js';
import { journalConsumer } from '../../src/engine/journal-consumer.js';
import { ConsoleReporter, reporterConsumer } from '../../src/engine/reporter.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { annotationLines } from '../../src/report/github-commands.js';
import { engineFor } from '../support/engine.js';

// The failing step stands on line 8, its id at column 3; nothing here sleeps or retries.
const RECIPE = `version: 1
name: agree
steps:
  list:
    run: echo ready
  # A comment, so that the step's line is not simply its place among the steps.

  shout:
    needs: [list]
    for_each: [0, 3, 0]
    retry: { attempts: 0 }
    run: "exit \${{ item }}"
`;

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('one run with a failed item, as the console, the journal and GitHub tell it', () => {
  it('names the same failed item and the same place in the recipe, from the one stream of events', async () => {
    gateway = await startLocalGateway({ latencyScale: 0, seed: 1 });
    const engine = await engineFor(RECIPE, gateway, systemClock);
    const { ctx } = engine;
    let console = '';
    const reporter = new ConsoleReporter(
      (text) => (console += text),
      () => Date.now(),
    );
    const github = new FailedStepAnnotations(ctx.plan.rows.length, process.cwd(), (text) => text);
    const seen: EngineEvent[] = [];
    ctx.emit = eventStream(
      journalConsumer(engine.journal),
      reporterConsumer(reporter, ctx.plan.rows.length, () => Date.now()),
      github.consume,
      (event) => void seen.push(event),
    );
    const result = await runPlan(ctx);
    expect(result.status).toBe('failed');

    // The events: item 1 failed, then its step, both at the step's place in the plan.
    const itemFailed = seen.filter((e) => e.type === 'item-failed');
    const stepFailed = seen.filter((e) => e.type === 'step-failed');
    expect(itemFailed.map((e) => e.item)).toEqual([{ step: 'shout', row: 0, index: 1 }]);
    expect(stepFailed.map((e) => e.at)).toEqual([{ step: 'shout', row: 0 }]);
    const location = { file: ctx.plan.recipePath, line: 8, column: 3 };
    expect(itemFailed[0]!.location).toEqual(location);
    expect(stepFailed[0]!.location).toEqual(location);
    expect(ctx.plan.steps.find((s) => s.id === 'shout')!.location).toEqual({ line: 8, column: 3 });
    expect(RECIPE.split('\n')[location.line - 1]!.slice(location.column - 1)).toBe('shout:');
    const message = stepFailed[0]!.failure.message;
    expect(message).toBe('the command exited with 3');

    // The journal: the same item, the same message.
    const journal = engine.events();
    expect(journal.filter((e) => e.type === 'item-failed')).toEqual([
      expect.objectContaining({ row: 0, step: 'shout', index: 1, reason: 'command-failed', message }),
    ]);
    expect(journal.filter((e) => e.type === 'step-failed')).toEqual([
      expect.objectContaining({ row: 0, step: 'shout', reason: 'command-failed', message }),
    ]);
    // Its two good items finished; the failed one did not.
    expect(journal.flatMap((e) => (e.type === 'item-finished' && e.step === 'shout' ? [e.index] : []))).toEqual(
      expect.arrayContaining([0, 2]),
    );
    expect(journal.some((e) => e.type === 'item-finished' && e.step === 'shout' && e.index === 1)).toBe(false);

    // The console: the step's failure with the same message.
    expect(console).toContain(`✗ shout failed: ${message}\n`);

    // GitHub: an error at the same line and column, with the same message.
    const annotations = github.annotations();
    expect(annotations).toEqual([
      expect.objectContaining({ kind: 'error', line: 8, col: 3, title: 'pipeline: step shout failed', message }),
    ]);
    expect(annotationLines(annotations, undefined, '/')[0]).toMatch(
      /^::error file=.*recipes\/test\.yaml,line=8,col=3,title=pipeline%3A step shout failed::the command exited with 3$/,
    );
    await engine.close();
  });
});

describe('the GitHub output of a failed step', () => {
  it('points where the event says, without reading the recipe (the file here does not even exist)', () => {
    const github = new FailedStepAnnotations(2, '/', (text) => text.replaceAll('secret', '***'));
    const failure = { reason: 'command-failed' as const, message: 'it broke with secret', outcomeUnknown: false };
    const location = { file: '/nowhere/at/all.yaml', line: 41, column: 7 };
    github.consume({ type: 'step-failed', at: { step: 'late', row: 1 }, failure, continued: false, location });
    github.consume({
      type: 'step-failed',
      at: { step: 'early', row: 1 },
      failure,
      continued: true,
      location: { ...location, line: 5 },
    });
    // Other events say nothing to GitHub.
    github.consume({ type: 'step-skipped', at: { step: 'other', row: 0 }, reason: 'its condition is false' });
    expect(github.annotations().map((a) => [a.title, a.file, a.line, a.col, a.message])).toEqual([
      ['pipeline: row 2 step early failed', 'nowhere/at/all.yaml', 5, 7, 'it broke with ***'],
      ['pipeline: row 2 step late failed', 'nowhere/at/all.yaml', 41, 7, 'it broke with ***'],
    ]);
  });
});
