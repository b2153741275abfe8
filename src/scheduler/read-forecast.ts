/** The next read of one task in flight, and the wait between reads after it. */
interface ExpectedRead {
  at: number;
  intervalMs: number;
}

/** The expected reads of one task, from its submission to its end. */
export interface TaskReads {
  /**
   * The task reads next at `at` (clock time), then every `intervalMs` while it runs (by default it
   * reads once: a task submitted now is read once its model's time is known, which may be at once).
   */
  expect(at: number, intervalMs?: number): void;
  /** The task has ended, or is no longer watched: no read of it is expected any more. */
  end(): void;
}

/**
 * The reads the tasks in flight are expected to make, and when: the room a budget leaves before it
 * lets a spare read go (RateBudget.hasSpareRoom). A spare read that took the room of a task's own
 * read would leave that task seen only after the window's reset, its slot held for nothing.
 *
 * A task's reads are expected from its submission on (`task`), moved on after each read that finds
 * it running, and forgotten when it ends; the budget asks how many are due before its window resets
 * (`readsBefore`). A read being sent is still counted until its answer moves it on: counted twice
 * for a moment, never taken by a spare read.
 */
export class ReadForecast {
  private readonly expected = new Map<object, ExpectedRead>();

  /** The reads of a task about to be submitted. */
  task(): TaskReads {
    const token = {};
    return {
      expect: (at, intervalMs = Number.POSITIVE_INFINITY) => {
        this.expected.set(token, { at, intervalMs });
      },
      end: () => {
        this.expected.delete(token);
      },
    };
  }

  /**
   * The reads expected before `time`, counting at most `atMost`: each task's next one if it comes
   * before, and one more each interval after it (an over-count for a task that ends at its next read,
   * which is what room is left for: in case it does not).
   */
  readsBefore(time: number, atMost: number): number {
    let count = 0;
    for (const { at, intervalMs } of this.expected.values()) {
      if (at >= time) continue;
      count += 1 + Math.floor((time - at) / Math.max(1, intervalMs));
      if (count >= atMost) return atMost;
    }
    return count;
  }
}
