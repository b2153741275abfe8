import { createLogUpdate } from 'log-update';
import type { Clock, ClockTimer } from '../clock.js';
import { formatDuration } from '../duration.js';
import type { Reporter } from '../engine/reporter.js';

/** What the footer shows of the request budget. */
export interface TrafficGauge {
  /** Requests sent in the last minute. */
  perMinute(): number;
  /** 429s seen so far. */
  readonly rateLimited: number;
  /** The requests per minute the run may send, when known. */
  limit(): number | undefined;
}

export interface LiveViewOptions {
  stream: NodeJS.WritableStream & { columns?: number; rows?: number };
  clock: Clock;
  traffic: TrafficGauge;
  /** Every line passes through it on its way out (the secret filter). */
  redact?: (text: string) => string;
  /** Draws frames and lines on the stream; default log-update's. Tests pass one that keeps the frames. */
  sink?: FrameSink;
  /** NO_COLOR (https://no-color.org): the footer is not dimmed. */
  noColor?: boolean;
}

/** Redraws a block in place, writes lines that stay above it (`persist`), keeps the last frame (`done`). */
export interface FrameSink {
  (frame: string): void;
  persist(text: string): void;
  done(): void;
}

interface Running {
  label: string;
  startedAt: number;
  total: number;
  done: number;
  /** Done before a resume: in the bar and the count, not in the pace. */
  resumed?: number;
  inFlight: number;
}

/** At most ten frames a second: a terminal redrawn faster only flickers. */
export const FRAME_MS = 100;
const TICK_MS = 1000;
const BAR_WIDTH = 24;

export function bar(done: number, total: number, width = BAR_WIDTH): string {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/** How long the rest takes at the pace so far (of the items done since the start); unknown until one is. */
export function eta(
  running: { startedAt: number; total: number; done: number; resumed?: number },
  now: number,
): string {
  if (running.done >= running.total) return '0s';
  const doneHere = running.done - (running.resumed ?? 0);
  if (doneHere <= 0) return '…';
  const perItem = (now - running.startedAt) / doneHere;
  return formatDuration(Math.round(perItem * (running.total - running.done)));
}

/**
 * The run on a terminal: finished steps as lines that stay, and beneath them, redrawn in place, a
 * line per running step (bar, done/total, tasks in flight, ETA) and a footer with the request rate
 * against the limit, the 429s and the time elapsed. The last frame stays on screen.
 */
export class LiveView implements Reporter {
  private readonly running = new Map<string, Running>();
  private readonly update: FrameSink;
  private readonly startedAt: number;
  private readonly redact: (text: string) => string;
  private timer: ClockTimer | undefined;
  private tick: ClockTimer | undefined;
  private lastFrameAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(private readonly options: LiveViewOptions) {
    this.update = options.sink ?? createLogUpdate(options.stream, { showCursor: true });
    this.startedAt = options.clock.now();
    this.redact = options.redact ?? ((text) => text);
  }

  private dim(text: string): string {
    return this.options.noColor ? text : `\x1b[2m${text}\x1b[0m`;
  }

  /** The frame as it would be drawn now. */
  frame(): string {
    const now = this.options.clock.now();
    // A loop, not Math.max(...): spread arguments go on the stack, one per step in progress.
    let width = 4;
    for (const label of this.running.keys()) width = Math.max(width, label.length);
    const lines = [...this.running.values()].map((r) => {
      const count = `${r.done}/${r.total}`.padStart(String(r.total).length * 2 + 1);
      return `${r.label.padEnd(width)} ${bar(r.done, r.total)} ${count}  ${r.inFlight} in flight  ETA ${eta(r, now)}`;
    });
    const { traffic } = this.options;
    const limit = traffic.limit();
    const rate = `${traffic.perMinute()} req/min${limit === undefined ? '' : ` of ${limit}`}`;
    lines.push(this.dim(`${rate} · ${traffic.rateLimited} × 429 · elapsed ${formatDuration(now - this.startedAt)}`));
    return this.redact(lines.join('\n'));
  }

  /** Draws now when the last frame is old enough, else once when it is. */
  private redraw(): void {
    if (this.closed || this.timer) return;
    const wait = this.lastFrameAt + FRAME_MS - this.options.clock.now();
    if (wait <= 0) {
      this.draw();
      return;
    }
    this.timer = this.options.clock.setTimer(wait, () => {
      this.timer = undefined;
      this.draw();
    });
  }

  /** Draws the frame; while steps run, the next comes within a second, so elapsed time and ETAs move. */
  private draw(): void {
    if (this.closed) return;
    const { clock } = this.options;
    this.lastFrameAt = clock.now();
    this.update(this.frame());
    if (this.tick) clock.clearTimer(this.tick);
    this.tick = this.running.size > 0 ? clock.setTimer(TICK_MS, () => this.draw()) : undefined;
  }

  private persist(text: string): void {
    if (this.closed) return;
    this.update.persist(this.redact(text));
    this.redraw();
  }

  stepStarted(label: string, runs: number | undefined, resumed = 0): void {
    const startedAt = this.options.clock.now();
    this.running.set(label, { label, startedAt, total: runs ?? 1, done: resumed, resumed, inFlight: 0 });
    this.redraw();
  }

  taskSubmitted(step: string, _item: string, _taskId: string): void {
    const entry = this.running.get(step);
    if (entry) entry.inFlight++;
    this.redraw();
  }

  /** Counted by the tasks' own ends, so that a failed task (which finishes no item) leaves the count too. */
  taskEnded(step: string): void {
    const entry = this.running.get(step);
    if (entry) entry.inFlight = Math.max(0, entry.inFlight - 1);
    this.redraw();
  }

  itemFinished(label: string, done: number, total: number): void {
    const entry = this.running.get(label);
    if (!entry) return;
    Object.assign(entry, { done, total });
    this.redraw();
  }

  stepFinished(label: string, ms: number, note?: string): void {
    this.running.delete(label);
    this.persist(`✓ ${label}${note ? ` (${note})` : ''} ${formatDuration(ms)}`);
  }

  stepSkipped(label: string, reason: string): void {
    this.running.delete(label);
    this.persist(`– ${label} skipped: ${reason}`);
  }

  stepFailed(label: string, message: string): void {
    this.running.delete(label);
    this.persist(`✗ ${label} failed: ${message}`);
  }

  note(text: string): void {
    this.persist(text);
  }

  /** The final frame, kept on screen. */
  close(): void {
    if (this.closed) return;
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.draw();
    if (this.tick) this.options.clock.clearTimer(this.tick);
    this.update.done();
    this.closed = true;
  }
}
