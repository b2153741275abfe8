/**
 * What happens in a run, as the engine tells it: one typed stream of events. The engine says
 * each thing once, through `emit`; the journal, the console (plain lines or the live view), the
 * log and the GitHub output are consumers of the stream, each an exhaustive `switch` that ends in
 * `unhandledEvent`, so that a new kind of event does not compile until every consumer decides what
 * to do with it (if only to ignore it).
 *
 * Items and steps are named by data (`RunItemRef`, `StepRef`), never by a label: a consumer that
 * shows a name formats it with `itemLabel`. Failures carry where their step stands in the recipe,
 * so no consumer reads the recipe again to point at it.
 */
import type { TaskResult } from '../gateway/types.js';
import type { RunItemRef, StepRef } from '../item-label.js';
import type { TrafficKind } from '../store/journal.js';
import type { StepFailure } from './failure.js';

/** Where a step stands in its recipe: the file (absolute), and the line and column of its id, from 1. */
export interface StepLocation {
  file: string;
  line: number;
  column: number;
}

export type EngineEvent =
  /**
   * `runs`: how many items it has, for a `for_each` step; `resumed`: how many of them were done
   * before a resume, which do not run again; `itemsFrom`: the step whose items it follows.
   */
  | { type: 'step-started'; at: StepRef; runs: number | undefined; resumed?: number; itemsFrom?: string }
  /** Done before the resume: nothing runs, and the journal has it already. */
  | { type: 'step-resumed'; at: StepRef }
  | { type: 'step-skipped'; at: StepRef; reason: string }
  /** Never ran, or was stopped mid-way, because the run was stopped or a step it needs failed. */
  | { type: 'step-cancelled'; at: StepRef; reason: string }
  /** Every item of the step came from the step cache, under these keys. */
  | { type: 'step-cached'; at: StepRef; keys: string[] }
  /** `items`: how many items the step had; `skippedItems`: those that did not run. */
  | {
      type: 'step-finished';
      at: StepRef;
      outputs: unknown;
      durationMs: number;
      items: number;
      skippedItems: number[];
    }
  /**
   * Its items failed and the retry policy runs them again after `waitMs`; `attempt` of `attempts`,
   * from 1. `items`: the items of a for_each step to run again (their indices), all that failed.
   */
  | {
      type: 'step-retrying';
      at: StepRef;
      failure: StepFailure;
      waitMs: number;
      attempt: number;
      attempts: number;
      /** The item of a `for_each` step that runs again (each is retried on its own). */
      index?: number;
    }
  /** `continued`: the step has continue_on_error, so the run goes on. */
  | { type: 'step-failed'; at: StepRef; failure: StepFailure; continued: boolean; location: StepLocation }
  /** An item of a `for_each` step succeeded: `done` of the step's `total`. */
  | { type: 'item-finished'; item: RunItemRef; outputs: unknown; done: number; total: number }
  /** An item that did not run: `byCondition` when its own `if` was false, else an item it descends from did not succeed. */
  | { type: 'item-skipped'; item: RunItemRef; reason: string; byCondition: boolean }
  /** An item that failed for good (after the step's retries), before its step's `step-failed`. */
  | { type: 'item-failed'; item: RunItemRef; failure: StepFailure; location: StepLocation }
  /** `input`: what the item asked (long strings cut), for the report. */
  | {
      type: 'item-cached';
      item: RunItemRef;
      key: string;
      input?: Record<string, unknown>;
      /** When and by which run the entry was made; none when an item of this run made it. */
      made?: { at: number; run?: string };
    }
  /** A paid request is about to leave: its id, and its price when known. The journal has it on disk first. */
  | { type: 'request-sent'; item: RunItemRef; slug: string; request: string; costUsd?: number }
  /** `input`: what was asked, as task-submitted journals it, for the report's card of the item. */
  | { type: 'submission-refused'; item: RunItemRef; reason: string; input?: Record<string, unknown> }
  /**
   * A paid text call is about to leave (answered in one exchange, billed by the token, so no price
   * here). The journal has it on disk first, so that a kill mid-call leaves a trace of it.
   */
  | { type: 'call-sent'; item: RunItemRef; model: string; request: string; input?: Record<string, unknown> }
  /**
   * How the paid call ended: `answered` (whatever the answer, it was billed), `failed` (certainly not
   * answered: refused, or never left), or `unknown` (cut off: it may have been answered and billed).
   */
  | { type: 'call-ended'; item: RunItemRef; request: string; outcome: CallOutcome; message?: string }
  /** The submission may or may not have created a task: never sent again automatically. */
  | { type: 'submission-unknown'; item: RunItemRef; request: string; message: string; input?: Record<string, unknown> }
  /**
   * The gateway gave the submission a task. `how`: `sent` by this run, or `recalled`: recorded by a
   * worker after the earlier run stopped, found on resume.
   */
  | {
      type: 'task-submitted';
      item: RunItemRef;
      slug: string;
      request: string;
      taskId: string;
      input: Record<string, unknown> | undefined;
      how: 'sent' | 'recalled';
    }
  | { type: 'task-finished'; item: RunItemRef; taskId: string; result: TaskResult; polls: number }
  | { type: 'output-written'; item: RunItemRef; taskId: string; url: string; path: string; bytes: number }
  /** The built-in gateway had no ffmpeg: the item's clip is its input video, unchanged. */
  | { type: 'clip-passed-through'; item: RunItemRef }
  /** A result URL an input named had expired: the run's local copy of it is uploaded instead. */
  | { type: 'result-url-expired'; url: string; path: string }
  /** A local file is on the gateway (`hash`: its SHA-256), under `fileId`, at `url` until `expiresAt`. */
  | { type: 'upload-done'; hash: string; path: string; fileId: string; url: string; expiresAt: number | null }
  /** The requests of one second that saw any, by kind, and the 429s among them (for the report's chart). */
  | { type: 'requests'; second: number; counts: Partial<Record<TrafficKind, number>>; rateLimited: number };

export type EventType = EngineEvent['type'];

export type CallOutcome = 'answered' | 'failed' | 'unknown';

/** Item `index` of a step in batch row `row`: a step without `for_each` has one item, named without an index. */
export const itemOf = (row: number, step: { id: string; forEach?: unknown }, index: number): RunItemRef => ({
  step: step.id,
  row,
  index: step.forEach ? index : undefined,
});

/**
 * Hears every event of a run. An answer that is a promise is waited for by whoever needs the event
 * settled: the journal answers one for `request-sent`, resolved once the line is on disk.
 */
export type EventConsumer = (event: EngineEvent) => void | Promise<void>;

/**
 * The end of every consumer's `switch`: `event` is `never` once each kind has its case, so a kind
 * left out fails to compile. An event from elsewhere at run time (it cannot be, but a stream is
 * data) is ignored rather than thrown.
 */
export function unhandledEvent(_event: never): void {}

/** One stream to many consumers, in the order given: the journal first, so that nothing shows before it is kept. */
export function eventStream(...consumers: EventConsumer[]): EventConsumer {
  return (event) => {
    const pending: Array<Promise<void>> = [];
    for (const consume of consumers) {
      const answer = consume(event);
      if (answer) pending.push(answer);
    }
    if (pending.length === 0) return;
    return pending.length === 1 ? pending[0] : Promise.all(pending).then(() => undefined);
  };
}
