import { formatDuration, formatLimit } from '../duration.js';
import { itemLabel, type RunItemRef, stepOf } from '../item-label.js';
import { type EventConsumer, unhandledEvent } from './events.js';

/**
 * What the console shows of a run, in the labels it prints: plain lines, or the live view on a
 * terminal. The run's events reach it through `reporterConsumer`, which names every step and item.
 */
export interface Reporter {
  /** `resumed`: how many of its `runs` were done before a resume. */
  stepStarted(label: string, runs: number | undefined, resumed?: number): void;
  /** A task of the step labelled `step` was submitted for its item labelled `item`. */
  taskSubmitted(step: string, item: string, taskId: string): void;
  /** A task of the step labelled `step` ended, whatever its end: one fewer in flight. */
  taskEnded(step: string): void;
  /** A for_each item finished: `done` of `total`. */
  itemFinished(label: string, done: number, total: number): void;
  /** `note`: what else to say of the step's end, such as `1 of 20 items skipped`. */
  stepFinished(label: string, ms: number, note?: string): void;
  /** A step or an item that does not run; a step that had started stops showing as running. */
  stepSkipped(label: string, reason: string): void;
  stepFailed(label: string, message: string): void;
  note(text: string): void;
  close(): void;
}

export const silentReporter: Reporter = {
  stepStarted() {},
  taskSubmitted() {},
  taskEnded() {},
  itemFinished() {},
  stepFinished() {},
  stepSkipped() {},
  stepFailed() {},
  note() {},
  close() {},
};

/** Above this many runs a step reports progress every tenth, not a line per task. */
const DETAILED_RUNS = 10;
/** The longest a large for_each goes without a progress line. */
const PROGRESS_EVERY_MS = 30_000;
/** The retries of one step the console names, one line each; the rest are one line. */
const RETRY_LINES = 10;

/**
 * Plain lines, one per event, for CI and pipes (a terminal gets the live view instead). A large
 * for_each reports its progress every tenth of its items instead of a line per task.
 */
export class ConsoleReporter implements Reporter {
  /** When each running step started: a quiet fan-out's progress counts from there. */
  private readonly running = new Map<string, number>();
  private readonly runs = new Map<string, number>();
  private readonly progressAt = new Map<string, number>();

  constructor(
    private readonly write: (text: string) => void,
    private readonly now: () => number,
  ) {}

  private line(text: string): void {
    this.write(`${text}\n`);
  }

  stepStarted(label: string, runs: number | undefined, resumed = 0): void {
    this.running.set(label, this.now());
    this.runs.set(label, runs ?? 1);
    const before = resumed > 0 ? `, ${resumed} done before the resume` : '';
    this.line(`▶ ${label}${runs !== undefined && runs !== 1 ? ` (${runs} runs${before})` : ''}`);
  }

  taskSubmitted(step: string, item: string, taskId: string): void {
    if ((this.runs.get(step) ?? 1) <= DETAILED_RUNS) this.line(`  ${item}: task ${taskId} submitted`);
  }

  taskEnded(): void {}

  itemFinished(label: string, done: number, total: number): void {
    if (total <= DETAILED_RUNS) return;
    const tenth = Math.ceil(total / 10);
    // A slow fan-out still says something every half minute.
    const quiet =
      this.now() - (this.progressAt.get(label) ?? this.running.get(label) ?? this.now()) >= PROGRESS_EVERY_MS;
    if ((done % tenth === 0 || quiet) && done < total) {
      this.progressAt.set(label, this.now());
      this.line(`  ${label}: ${done} of ${total} done`);
    }
  }

  stepFinished(label: string, ms: number, note?: string): void {
    this.running.delete(label);
    this.line(`✓ ${label}${note ? ` (${note})` : ''} ${formatDuration(ms)}`);
  }

  stepSkipped(label: string, reason: string): void {
    this.running.delete(label);
    this.line(`– ${label} skipped: ${reason}`);
  }

  stepFailed(label: string, message: string): void {
    this.running.delete(label);
    this.line(`✗ ${label} failed: ${message}`);
  }

  note(text: string): void {
    this.line(text);
  }

  close(): void {}
}

/**
 * The console as a consumer of the run's events: which of them it shows, and in what words. Steps
 * are named with their batch row when there are several (`row 2 hero`); an item's task and cache
 * lines name it as they always have, by its step and index alone (`hero[2]`).
 */
/** `now`: the run's clock, for the time a batch's step took over all its rows. */
export function reporterConsumer(report: Reporter, rows: number, now: () => number): EventConsumer {
  const batch = rows > DETAILED_RUNS ? new BatchProgress(report, rows) : undefined;
  /** The line a task counts in: its step's, which a large batch shows once for all its rows. */
  const taskLine = (item: RunItemRef) => (batch ? item.step : itemLabel(stepOf(item), rows));
  // Retries are per item: a 1,000-item step failing often would print a line each. The first
  // RETRY_LINES of a step are named, then one line says the rest are retried too.
  const retryLines = new Map<string, number>();
  return (event) => {
    switch (event.type) {
      case 'step-started':
        if (batch) batch.started(event.at.step, now());
        else report.stepStarted(itemLabel(event.at, rows), event.runs, event.resumed);
        return;
      case 'step-resumed':
        // A large batch counts its rows done before the resume in its progress, not a line each.
        if (batch) {
          batch.started(event.at.step, now());
          batch.ended(event.at.step, now(), 'resumed');
        } else report.note(`✓ ${itemLabel(event.at, rows)} (done before the resume)`);
        return;
      case 'step-skipped':
        if (batch) batch.ended(event.at.step, now(), 'skipped');
        else report.stepSkipped(itemLabel(event.at, rows), event.reason);
        return;
      case 'step-finished': {
        const skipped = event.skippedItems.length;
        const note = skipped > 0 ? `${skipped} of ${event.items} items skipped` : undefined;
        // A batch's row is counted, whatever it skipped: the run's end names the items skipped.
        if (batch) batch.ended(event.at.step, now(), 'done');
        else report.stepFinished(itemLabel(event.at, rows), event.durationMs, note);
        return;
      }
      case 'step-retrying': {
        const { failure, waitMs, attempt, attempts, index } = event;
        const wait = `retrying in ${formatLimit(waitMs)} (${attempt} of ${attempts})`;
        const step = itemLabel(event.at, rows);
        const told = (retryLines.get(step) ?? 0) + 1;
        retryLines.set(step, told);
        // An item of a for_each is named as the item.
        if (told <= RETRY_LINES)
          report.note(`↻ ${itemLabel({ ...event.at, index }, rows)}: ${failure.message}; ${wait}`);
        else if (told === RETRY_LINES + 1)
          report.note(
            `↻ ${step}: more of its items failed and are retried too, unnamed here (runs show lists what failed for good)`,
          );
        return;
      }
      case 'step-failed': {
        const { message } = event.failure;
        batch?.ended(event.at.step, now(), 'failed');
        report.stepFailed(
          itemLabel(event.at, rows),
          event.continued ? `${message} (continue_on_error: the run goes on)` : message,
        );
        return;
      }
      case 'item-finished':
        report.itemFinished(itemLabel(stepOf(event.item), rows), event.done, event.total);
        return;
      case 'item-failed':
        // Named when it gives up, before the items it skips are (a batch names its rows' failures at
        // their steps' ends): a chain's step may go on for long after one of its items failed.
        if (!batch) report.stepFailed(itemLabel(event.item, rows), event.failure.message);
        return;
      case 'item-skipped':
        // An item whose own condition is false is only counted, at its step's end; the others are named.
        if (!event.byCondition) report.stepSkipped(itemLabel(event.item, rows), event.reason);
        return;
      case 'item-cached':
        report.note(`⚡ ${itemLabel(event.item, rows)} cached`);
        return;
      case 'task-submitted': {
        const item = itemLabel(event.item, rows);
        if (event.how === 'recalled')
          report.note(`${item}: task ${event.taskId}, recorded by a worker after the earlier run stopped, is read`);
        // A large batch names no task: its step's line counts them in flight (BatchProgress).
        else report.taskSubmitted(taskLine(event.item), item, event.taskId);
        return;
      }
      case 'task-finished':
        report.taskEnded(taskLine(event.item));
        return;
      case 'clip-passed-through':
        report.note(
          `note: ${itemLabel({ step: event.item.step, index: event.item.index })}: no ffmpeg on this machine, so the clip was passed through unchanged (install ffmpeg, or the optional @ffmpeg-installer/ffmpeg)`,
        );
        return;
      // Cancellations are many after a stop or a failure: the run's end counts them in one line.
      case 'step-cancelled':
      case 'step-cached':
      case 'request-sent':
      case 'submission-refused':
      case 'submission-unknown':
      case 'call-sent':
      case 'call-ended':
      case 'output-written':
      case 'result-url-expired':
      case 'upload-done':
      case 'requests':
        return;
      default:
        unhandledEvent(event);
    }
  };
}

/**
 * A batch of many rows shows each step once, as a fan-out shows its items: started at its first
 * row, its rows counted every tenth, ended at its last (failures are still named, row by row).
 * A line per row and per task would be 200,000 lines for 100,000 rows.
 */
class BatchProgress {
  private readonly steps = new Map<
    string,
    { startedAt: number; done: number; skipped: number; failed: number; resumed: number }
  >();

  constructor(
    private readonly report: Reporter,
    private readonly rows: number,
  ) {}

  started(step: string, at: number): void {
    if (this.steps.has(step)) return;
    this.steps.set(step, { startedAt: at, done: 0, skipped: 0, failed: 0, resumed: 0 });
    this.report.stepStarted(step, this.rows);
  }

  /** `resumed`: done before the resume (its journal says so), counted apart at the step's end. */
  ended(step: string, at: number, how: 'done' | 'skipped' | 'failed' | 'resumed'): void {
    const counts = this.steps.get(step) ?? { startedAt: at, done: 0, skipped: 0, failed: 0, resumed: 0 };
    this.steps.set(step, counts);
    counts.done++;
    if (how === 'skipped') counts.skipped++;
    if (how === 'failed') counts.failed++;
    if (how === 'resumed') counts.resumed++;
    this.report.itemFinished(step, counts.done, this.rows);
    if (counts.done < this.rows) return;
    const notes = [
      ...(counts.failed > 0 ? [`${counts.failed} of ${this.rows} rows failed`] : []),
      ...(counts.skipped > 0 ? [`${counts.skipped} of ${this.rows} rows skipped`] : []),
      ...(counts.resumed > 0 ? [`${counts.resumed} of ${this.rows} rows done before the resume`] : []),
    ];
    // Not a tick for a step some rows of which failed.
    if (counts.failed > 0) this.report.stepFailed(step, notes.join(', '));
    else this.report.stepFinished(step, at - counts.startedAt, notes.join(', ') || undefined);
  }
}
