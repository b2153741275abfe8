import { formatDuration } from '../duration.js';

/** What the console shows of a run. The engine tells; how it is drawn is the reporter's business. */
export interface Reporter {
  stepStarted(label: string, runs: number | undefined): void;
  taskSubmitted(label: string, taskId: string): void;
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

  stepStarted(label: string, runs: number | undefined): void {
    this.running.set(label, this.now());
    this.runs.set(label.replace(/\[\d+\]$/, ''), runs ?? 1);
    this.line(`▶ ${label}${runs !== undefined && runs !== 1 ? ` (${runs} runs)` : ''}`);
  }

  taskSubmitted(label: string, taskId: string): void {
    if ((this.runs.get(label.replace(/\[\d+\]$/, '')) ?? 1) <= DETAILED_RUNS)
      this.line(`  ${label}: task ${taskId} submitted`);
  }

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
