import type PQueue from 'p-queue';
import type { Clock } from '../clock.js';

/** What a row's model items tell the admission. */
export interface RowProgress {
  /** The row has a task ready for a slot, expected to take `expectedMs`: called just before it is queued. */
  taskReady(row: number, expectedMs: number): void;
  /** Runs the row's task, which has taken a task slot, counting the slot time it holds. */
  inSlot<T>(row: number, task: () => Promise<T>): Promise<T>;
}

/** A row in progress, as the admission follows it. */
interface RowState {
  startedAt: number;
  /** Started, but with no task ready for a slot yet. */
  preparing: boolean;
  /** The expected time of the row's tasks made ready so far. */
  expectedMs: number;
  /** The slot time its tasks held and left; undefined until one takes a slot. */
  slotMs?: number;
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
 *
 * Rows are never held past the moment they would end after everything else: once the slot time the
 * rows not yet ended still need (their count × the mean slot time of a row so far, less what the
 * rows in progress have held), over the slots, is no more than a row's mean time from its start to
 * its end, the rows held start whatever waits. Each row's tasks that nothing downstream reads
 * (launch-kit's other heroes) go after the chains, so where many rows started early their queue
 * could hold the last rows back until the end (mixed-chain by hand: 17 rows started in the first
 * 10 s, the last 3 at 76 s, 110.2 s in all).
 */
export class RowAdmission implements RowProgress {
  private readonly rows = new Map<number, RowState>();
  private preparingCount = 0;
  private rowsEnded = 0;
  /** Means so far: a row's time from its start to its first task ready, and its tasks' expected time. */
  private readonly prepMs = new RunningMean();
  private readonly workMs = new RunningMean();
  /**
   * Rows ended so far that held a task slot: the time from a row's start to its end, and the slot
   * time its tasks held. Rows that held none (a resume's finished rows, rows served from the cache
   * or skipped) say nothing of what a row needs.
   */
  private readonly spanMs = new RunningMean();
  private readonly rowSlotMs = new RunningMean();
  /** The slot time the rows in progress have held and left. */
  private slotMsInProgress = 0;
  /** The tasks in a slot now: their count, and the sum of the times they took it. */
  private inSlots = 0;
  private inSlotsSinceSum = 0;
  private listener: (() => void) | undefined;
  private readonly onSlotTaken = () => this.listener?.();

  constructor(
    /** The task slots: `concurrency` of them (and `queue_ahead`), the `limit` below. */
    private readonly tasks: PQueue,
    private readonly clock: Pick<Clock, 'now'>,
    /** The rows of the batch. */
    private readonly rowCount: number,
  ) {
    tasks.on('active', this.onSlotTaken);
  }

  /** The task slots' count. */
  private get limit(): number {
    return this.tasks.concurrency;
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
    return (this.tasks.size < this.limit && this.preparingCount < this.preparingLimit()) || this.heldRowWouldEndLast();
  }

  /**
   * Whether the slot time the rows not yet ended still need, over the slots, is within a row's time
   * from start to end, so that a row held any longer would end after the rest of the batch. Both
   * from the rows ended so far that held a slot: nothing before one has. The slot time grows with
   * the clock, so this is asked again at every slot taken or left, task ready and row ended. Once
   * true it stays true: every row held starts, within the cap on rows in progress.
   */
  private heldRowWouldEndLast(): boolean {
    const rowSlotMs = this.rowSlotMs.value;
    if (rowSlotMs <= 0) return false;
    const heldMs = this.slotMsInProgress + this.inSlots * this.clock.now() - this.inSlotsSinceSum;
    const neededMs = (this.rowCount - this.rowsEnded) * rowSlotMs - heldMs;
    return neededMs / this.limit <= this.spanMs.value;
  }

  /** How many rows may prepare at once: enough that their tasks keep the slots busy. */
  private preparingLimit(): number {
    const work = this.workMs.value;
    if (work <= 0) return this.limit;
    return Math.max(this.limit, Math.ceil((this.limit * this.prepMs.value) / work));
  }

  /** Called whenever `mayStart` may have become true: a slot taken or left, a row that has a task ready or ended. */
  onChange(listener: () => void): void {
    this.listener = listener;
  }

  started(row: number): void {
    this.rows.set(row, { startedAt: this.clock.now(), preparing: true, expectedMs: 0 });
    this.preparingCount++;
  }

  taskReady(row: number, expectedMs: number): void {
    const state = this.rows.get(row);
    if (!state) return;
    state.expectedMs += expectedMs;
    if (!state.preparing) return;
    state.preparing = false;
    this.preparingCount--;
    this.prepMs.add(this.clock.now() - state.startedAt);
    this.listener?.();
  }

  async inSlot<T>(row: number, task: () => Promise<T>): Promise<T> {
    const since = this.clock.now();
    const state = this.rows.get(row);
    if (state) state.slotMs ??= 0;
    this.inSlots++;
    this.inSlotsSinceSum += since;
    try {
      return await task();
    } finally {
      const heldMs = this.clock.now() - since;
      this.inSlots--;
      this.inSlotsSinceSum -= since;
      // A task that outlived its row (stopped) counts no more.
      if (state && this.rows.get(row) === state) {
        state.slotMs! += heldMs;
        this.slotMsInProgress += heldMs;
      }
      // Time has passed since the last question: a held row may start now.
      this.listener?.();
    }
  }

  ended(row: number): void {
    const state = this.rows.get(row);
    this.rowsEnded++;
    if (!state) return;
    this.rows.delete(row);
    if (state.preparing) this.preparingCount--;
    if (state.slotMs !== undefined) {
      this.spanMs.add(this.clock.now() - state.startedAt);
      this.rowSlotMs.add(state.slotMs);
      this.slotMsInProgress -= state.slotMs;
    }
    // A row that never made a task ready (served from the cache, say) tells nothing of a row's work.
    if (!state.preparing) this.workMs.add(state.expectedMs);
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
