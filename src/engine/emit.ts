import type { EngineContext } from './context.js';
import type { EngineEvent, StepLocation } from './events.js';

/**
 * The engine's one way to tell what happened. Await the answer where the event must be settled
 * before going on (a `request-sent` before its paid request leaves); elsewhere it can be ignored.
 */
export function emit(ctx: EngineContext, event: EngineEvent): void | Promise<void> {
  return ctx.emit(event);
}

/** Where a step stands in the plan's recipe. */
export const locationOf = (ctx: EngineContext, step: { location: { line: number; column: number } }): StepLocation => ({
  file: ctx.plan.recipePath,
  ...step.location,
});
