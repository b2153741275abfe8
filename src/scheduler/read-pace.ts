/**
 * The pace of the reads of tasks in flight: once the gateway's window is known, reads take it no
 * faster than evenly over it, with a burst of a tenth of it, so that the room left before the reset
 * is there for the submissions their reads make possible. Unpaced, the reads due together took a
 * window in its first seconds; the tasks that ended in its last seconds then waited for the reset,
 * unseen, and the submissions into their slots with them (chain-items with `queue_ahead: 4`: the
 * gateway's places idle 42 place-seconds in the window's last second, 15 in its third).
 *
 * RateBudget applies it in this process; RedisBudget's acquire script (redis-scripts.ts) applies
 * the same rule to the shared window, in Lua, and each process tells it the window's length.
 */

/** The shortest window believed: resets are told to the second, give or take one. */
const MIN_WINDOW_MS = 2000;
/** How far a reset told as seconds from now may move within one window. */
const ROUNDING_MS = 1000;

/**
 * The length of the gateway's window, learned from the steps between the resets of successive
 * windows: a step of MIN_WINDOW_MS or more (less is a rounding: a gateway that gives its reset as
 * seconds from now moves it within one window), believed once two steps in a row agree to a second
 * (a fixed window; a reset that slides with time never settles). A reset further off than the
 * window believed, a second of rounding aside, proves it wrong: it is forgotten and learned again.
 */
export class WindowLength {
  /** The window's length; undefined until learned, and then reads are not paced. */
  ms: number | undefined;
  /** The first reset told of the latest window, kept across the rollover that forgets the budget's reset. */
  private lastResetAt: number | undefined;
  /** The step from the window before that one's reset to `lastResetAt`. */
  private lastStepMs: number | undefined;

  /** An answer's headers at `now`: those that tell a window (a reset to come, and a count) teach its length. */
  observeAnswer(answer: { resetAt?: number; remaining?: number }, now: number): void {
    const { resetAt, remaining } = answer;
    if (resetAt !== undefined && remaining !== undefined && resetAt > now) this.observe(resetAt, now);
  }

  /** An answer told the window's reset, `resetAt`, at `now`. */
  private observe(resetAt: number, now: number): void {
    if (this.ms !== undefined && resetAt - now > this.ms + ROUNDING_MS) {
      this.ms = undefined;
      this.lastStepMs = undefined;
    }
    const last = this.lastResetAt;
    if (last === undefined) {
      this.lastResetAt = resetAt;
      return;
    }
    const step = resetAt - last;
    if (step < MIN_WINDOW_MS) return;
    this.lastResetAt = resetAt;
    if (this.lastStepMs !== undefined && Math.abs(step - this.lastStepMs) <= ROUNDING_MS)
      this.ms = Math.min(step, this.lastStepMs);
    this.lastStepMs = step;
  }

  /**
   * When the current window ends by the steps learned: after a rollover, no answer has told the
   * new window's reset yet. Undefined while the length is not known.
   */
  nextEnd(): number | undefined {
    return this.ms === undefined || this.lastResetAt === undefined ? undefined : this.lastResetAt + this.ms;
  }
}

export interface WindowState {
  /** The window's length; undefined: not known, nothing paced. */
  windowMs: number | undefined;
  /** Requests per window (this process's share of them, when it has one). */
  limit: number | undefined;
  /** The gateway's latest count of what the window has left. */
  remaining: number | undefined;
  /** Requests sent and not yet answered, which come off `remaining`. */
  unanswered: number;
  /** When the window resets: the latest answer's reset, else the end the learned steps give. */
  endsAt: number | undefined;
}

/**
 * The earliest moment a read of a task in flight may go: `now` when the window's length or end is
 * not known, or while the room left after the read is at least the window's even share still to
 * come less the burst; else the moment that share has shrunk to what the read leaves.
 */
export function readPaceTime(state: WindowState, now: number): number {
  const { windowMs, limit, remaining, unanswered } = state;
  let endsAt = state.endsAt;
  if (windowMs === undefined || limit === undefined || remaining === undefined) return now;
  if (endsAt === undefined || endsAt <= now) return now;
  // At most a rounding past a window away: an answer telling a reset farther off forgets the window.
  if (endsAt - now > windowMs) endsAt = now + windowMs;
  const burst = Math.max(1, Math.floor(limit / 10));
  // The read leaves `room - 1`; enough while it is at least the window's share still to come.
  const room = remaining - unanswered;
  if (room - 1 >= Math.ceil((limit * (endsAt - now)) / windowMs) - burst) return now;
  return Math.ceil(endsAt - ((room - 1 + burst) * windowMs) / limit);
}
