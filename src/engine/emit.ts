import type { EngineContext } from './context.js';
import { type EngineEvent, type EventConsumer, eventStream, type StepLocation } from './events.js';
import { journalConsumer } from './journal-consumer.js';
import { logConsumer } from './log-consumer.js';
import { reporterConsumer } from './reporter.js';

/**
 * A context that was given no stream of its own (tests build their contexts by hand) has the
 * standard one: its journal, its reporter and its log. Built once per context.
 */
const standardStreams = new WeakMap<EngineContext, EventConsumer>();

function streamOf(ctx: EngineContext): EventConsumer {
  if (ctx.emit) return ctx.emit;
  let stream = standardStreams.get(ctx);
  if (!stream) {
    stream = eventStream(
      journalConsumer(ctx.journal),
      reporterConsumer(ctx.report, ctx.plan.rows.length),
      logConsumer(ctx.log),
    );
    standardStreams.set(ctx, stream);
  }
  return stream;
}

/**
 * The engine's one way to tell what happened. Await the answer where the event must be settled
 * before going on (a `request-sent` before its paid request leaves); elsewhere it can be ignored.
 */
export function emit(ctx: EngineContext, event: EngineEvent): void | Promise<void> {
  return streamOf(ctx)(event);
}

/** Where a step stands in the plan's recipe. */
export const locationOf = (ctx: EngineContext, step: { location: { line: number; column: number } }): StepLocation => ({
  file: ctx.plan.recipePath,
  ...step.location,
});
