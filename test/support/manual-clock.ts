import { setImmediate as nextTurn } from 'node:timers/promises';

interface PendingTimer {
  id: number;
  due: number;
  callback: () => void;
}

/**
 * A clock that moves only when a test says so. It satisfies the gateway's clock interface
 * (and, structurally, any other `now`/`setTimer`/`clearTimer` clock of the project).
 */
export class ManualClock {
  private current: number;
  private timers: PendingTimer[] = [];
  private nextId = 1;

  constructor(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, callback: () => void): { id: number } {
    const timer = { id: this.nextId++, due: this.current + Math.max(0, ms), callback };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimer(timer: { id: unknown }): void {
    this.timers = this.timers.filter((t) => t.id !== timer.id);
  }

  /** When the next timer is due, if any. */
  nextDue(): number | undefined {
    return this.timers.reduce<number | undefined>((min, t) => (min === undefined || t.due < min ? t.due : min), undefined);
  }

  /** Timers still waiting. */
  pending(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing each due timer at its own moment, in order, and letting
   * the work it starts (promise chains, I/O callbacks) take a turn before the next one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await nextTurn();
      const due = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.due);
      due.callback();
    }
    this.current = target;
    await nextTurn();
  }
}

/**
 * Runs `work` to completion on a manual clock: while requests are in flight (`busy()`), real I/O
 * is given time; when nothing is in flight, the clock jumps to the next timer, if it is near.
 */
export async function drive<T>(clock: ManualClock, work: Promise<T>, busy: () => boolean, limitMs = 10 * 60_000, maxJumpMs = 60_000): Promise<T> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const start = clock.now();
  while (!settled) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (settled || busy()) continue;
    const due = clock.nextDue();
    // A far timer (a result's expiry) is not jumped to while work may still be under way on real I/O.
    if (due === undefined || due - clock.now() > maxJumpMs) continue;
    if (due - start > limitMs) throw new Error(`drive: gave up after ${limitMs} ms of clock time`);
    await clock.advance(Math.max(0, due - clock.now()));
  }
  return work;
}
