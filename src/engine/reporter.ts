import { formatDuration } from '../duration.js';

/** What the console shows of a run. The engine tells; how it is drawn is the reporter's business. */
export interface Reporter {
  stepStarted(label: string, runs: number | undefined): void;
  taskSubmitted(label: string, taskId: string): void;
  stepFinished(label: string, ms: number): void;
  stepSkipped(label: string, reason: string): void;
  stepFailed(label: string, message: string): void;
  note(text: string): void;
  close(): void;
}

export const silentReporter: Reporter = { stepStarted() {}, taskSubmitted() {}, stepFinished() {}, stepSkipped() {}, stepFailed() {}, note() {}, close() {} };

/**
 * Plain lines, one per event, for CI and pipes; on a terminal a status line under them shows the
 * steps running now and the tasks in flight, redrawn in place.
 */
export class ConsoleReporter implements Reporter {
  private readonly running = new Map<string, number>();
  private tasks = 0;
  private statusShown = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly live: boolean,
    private readonly now: () => number,
  ) {}

  private line(text: string): void {
    this.clearStatus();
    this.write(`${text}\n`);
    this.drawStatus();
  }

  private clearStatus(): void {
    if (this.statusShown) this.write('\r\x1b[2K');
    this.statusShown = false;
  }

  private drawStatus(): void {
    if (!this.live || this.running.size === 0) return;
    const names = [...this.running.keys()];
    const shown = names.slice(0, 4).join(', ') + (names.length > 4 ? ` and ${names.length - 4} more` : '');
    this.write(`\x1b[2m… running ${shown}; ${this.tasks} task${this.tasks === 1 ? '' : 's'} submitted\x1b[0m`);
    this.statusShown = true;
  }

  stepStarted(label: string, runs: number | undefined): void {
    this.running.set(label, this.now());
    this.line(`▶ ${label}${runs !== undefined && runs !== 1 ? ` (${runs} runs)` : ''}`);
  }

  taskSubmitted(label: string, taskId: string): void {
    this.tasks++;
    if (this.live) {
      this.clearStatus();
      this.drawStatus();
    } else this.line(`  ${label}: task ${taskId} submitted`);
  }

  stepFinished(label: string, ms: number): void {
    this.running.delete(label);
    this.line(`✓ ${label} ${formatDuration(ms)}`);
  }

  stepSkipped(label: string, reason: string): void {
    this.line(`– ${label} skipped: ${reason}`);
  }

  stepFailed(label: string, message: string): void {
    this.running.delete(label);
    this.line(`✗ ${label} failed: ${message}`);
  }

  note(text: string): void {
    this.line(text);
  }

  close(): void {
    this.clearStatus();
  }
}
