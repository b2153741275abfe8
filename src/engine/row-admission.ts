import type PQueue from 'p-queue';

/** What a row's model items tell the admission: the row has a task ready for a slot. */
export interface RowProgress {
  taskReady(row: number): void;
}

/**
 * When the next row of a batch may start. A row starts while fewer than `limit` rows are still
 * preparing (started, but with no task ready for a slot yet: their searches, fetches, text calls
 * and commands) and fewer than `limit` tasks wait for a slot, `limit` being the task slots.
 *
 * Started all at once, 20 rows of search → fetch → text → images spent the gateway's first rate
 * window on their preparation, breadth first, and the task slots stood empty until the next window
 * (6 s of 8 slots in bench mixed-chain). Held to what the slots can take, the first rows reach
 * their tasks within the first window. A row that waits on one long task (a video) is neither
 * preparing nor waiting, so it does not hold back a new row, as a fixed number of rows in progress
 * would. And `limit` rows preparing at once keep the slots fed where preparing takes long: each
 * row brings several tasks' work.
 */
export class RowAdmission implements RowProgress {
  private readonly preparing = new Set<number>();
  private listener: (() => void) | undefined;
  private readonly onSlotTaken = () => this.listener?.();

  constructor(
    private readonly tasks: PQueue,
    private readonly limit: number,
  ) {
    tasks.on('active', this.onSlotTaken);
  }

  /**
   * Whether another row may start now. Every task waiting counts, whatever its priority: counting
   * only those a new row's first task would wait behind let rows in faster than the slots took
   * their chains, and the chains ran in waves again (bench mixed-chain 99.5 and 102.0 s against
   * 94.7 and 94.2 s).
   */
  mayStart(): boolean {
    return this.preparing.size < this.limit && this.tasks.size < this.limit;
  }

  /** Called whenever `mayStart` may have become true: a slot taken, a row that has a task ready or ended. */
  onChange(listener: () => void): void {
    this.listener = listener;
  }

  started(row: number): void {
    this.preparing.add(row);
  }

  /** Called just before the task is added to the queue, which may start it at once. */
  taskReady(row: number): void {
    if (this.preparing.delete(row)) this.listener?.();
  }

  ended(row: number): void {
    this.preparing.delete(row);
  }

  close(): void {
    this.tasks.off('active', this.onSlotTaken);
    this.listener = undefined;
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
