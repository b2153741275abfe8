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
    return this.timers.reduce<number | undefined>(
      (min, t) => (min === undefined || t.due < min ? t.due : min),
      undefined,
    );
  }

  /** Timers still waiting. */
  pending(): number {
    return this.timers.length;
  }

  /** When each waiting timer is due, soonest first. */
  dues(): number[] {
    return this.timers.map((t) => t.due).sort((a, b) => a - b);
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
