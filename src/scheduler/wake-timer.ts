import type { Clock, ClockTimer } from '../clock.js';

/**
 * One pending wake-up of a budget: asking again for the same moment keeps the timer, another
 * moment replaces it, so a budget that pumps often arms at most one timer at a time.
 */
export class WakeTimer {
  private timer: { handle: ClockTimer; due: number } | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly onWake: () => void,
  ) {}

  /** Wakes at `due` (clock time); a due that is not finite cancels the wake-up. */
  wakeAt(due: number): void {
    if (!Number.isFinite(due)) {
      this.cancel();
      return;
    }
    if (this.timer && this.timer.due === due) return;
    this.cancel();
    const handle = this.clock.setTimer(due - this.clock.now(), () => {
      this.timer = undefined;
      this.onWake();
    });
    this.timer = { handle, due };
  }

  cancel(): void {
    if (this.timer) this.clock.clearTimer(this.timer.handle);
    this.timer = undefined;
  }
}
