import type PQueue from 'p-queue';
import type { Clock } from '../clock.js';

/** What a row's model items tell the admission: the row has a task ready for a slot, expected to take `expectedMs`. */
export interface RowProgress {
  taskReady(row: number, expectedMs: number): void;
}

/**
 * When the next row of a batch may start: while fewer tasks than `limit` (the task slots) wait for
 * a slot, and fewer rows than `limit` are still preparing (started, but with no task ready for a
 * slot yet: their searches, fetches, text calls and commands), or more where preparing takes longer
 * than the slots take for a row's tasks.
 *
 * Started all at once, 20 rows of search → fetch → text → images spent the gateway's first rate
 * window on their preparation, breadth first, and the task slots stood empty until the next window
 * (6 s of 8 slots in bench mixed-chain). Held to what the slots can take, the first rows reach
 * their tasks within the first window. A row that waits on one long task (a video) is neither
 * preparing nor waiting, so it does not hold back a new row, as a fixed number of rows in progress
 * would. Where each row has a text call of half a minute before one image of ten seconds, `limit`
 * rows preparing would leave the slots idle two thirds of the time: the rows preparing at once go
 * up to `limit` × the rows' preparation time ÷ their tasks' expected time (Little's law), from
 * what the rows that ended so far took.
 */
export class RowAdmission implements RowProgress {
  /** The rows preparing, and when each started. */
  private readonly preparing = new Map<number, number>();
  /** The expected time of the tasks of each row in progress so far. */
  private readonly rowWorkMs = new Map<number, number>();
  /** Means so far: a row's time from its start to its first task ready, and its tasks' expected time. */
  private readonly prepMs = new RunningMean();
  private readonly workMs = new RunningMean();
  private listener: (() => void) | undefined;
  private readonly onSlotTaken = () => this.listener?.();

  constructor(
    private readonly tasks: PQueue,
    private readonly limit: number,
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    tasks.on('active', this.onSlotTaken);
  }

  /**
   * Whether another row may start now. Every task waiting counts, whatever its priority: counting
   * only those a new row's first task would wait behind let rows in faster than the slots took
   * their chains, and the chains ran in waves again (bench mixed-chain 99.5 and 102.0 s against
   * 94.7 and 94.2 s). Nor does a short queue let rows in early by the time they take to prepare:
   * where the rate limit binds, preparing takes longer the more rows prepare, so that rule feeds
   * itself (tried: 97.4 s twice, within the spread of the rule kept, 93.7 to 98.1 s).
   */
  mayStart(): boolean {
    return this.tasks.size < this.limit && this.preparing.size < this.preparingLimit();
  }

  /** How many rows may prepare at once: enough that their tasks keep the slots busy. */
  private preparingLimit(): number {
    const work = this.workMs.value;
    if (work <= 0) return this.limit;
    return Math.max(this.limit, Math.ceil((this.limit * this.prepMs.value) / work));
  }

  /** Called whenever `mayStart` may have become true: a slot taken, a row that has a task ready or ended. */
  onChange(listener: () => void): void {
    this.listener = listener;
  }

  started(row: number): void {
    this.preparing.set(row, this.clock.now());
  }

  /** Called just before the task is added to the queue, which may start it at once. */
  taskReady(row: number, expectedMs: number): void {
    this.rowWorkMs.set(row, (this.rowWorkMs.get(row) ?? 0) + expectedMs);
    const startedAt = this.preparing.get(row);
    if (startedAt === undefined) return;
    this.preparing.delete(row);
    this.prepMs.add(this.clock.now() - startedAt);
    this.listener?.();
  }

  ended(row: number): void {
    this.preparing.delete(row);
    const work = this.rowWorkMs.get(row);
    if (work === undefined) return;
    this.rowWorkMs.delete(row);
    this.workMs.add(work);
  }

  close(): void {
    this.tasks.off('active', this.onSlotTaken);
    this.listener = undefined;
  }
}

/** A mean kept as a sum and a count; 0 until the first value. */
class RunningMean {
  private sum = 0;
  private count = 0;
  add(value: number): void {
    this.sum += value;
    this.count++;
  }
  get value(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }
}

/**
 * `run(0)` … `run(count - 1)` in order, each started as soon as fewer than `cap` are in progress and
 * `admission` (when given) lets it; resolves when all have ended, or rejects with the first error
 * once the others have ended. Holds no promise per row: a batch may have a million.
 */
export async function startRows(
  count: number,
  cap: number,
  admission: RowAdmission | undefined,
  run: (row: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let inProgress = 0;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  const waitForChange = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });
  admission?.onChange(poke);
  try {
    while (next < count && !failure) {
      if (inProgress >= cap || (admission && !admission.mayStart())) {
        await waitForChange();
        continue;
      }
      const row = next++;
      inProgress++;
      admission?.started(row);
      run(row)
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => {
          inProgress--;
          admission?.ended(row);
          poke();
        });
    }
    while (inProgress > 0) await waitForChange();
  } finally {
    admission?.close();
  }
  if (failure) throw failure.error;
}
