import type { RequestGate, RequestPurpose } from '../gateway/gate.js';
import type { RateLimitObservation } from '../gateway/rate-limit-headers.js';
import type { Clock } from '../clock.js';
import type { Budget, BudgetSnapshot } from './budget-interface.js';
import type { ReadForecast } from './read-forecast.js';
import { readPaceTime, WindowLength } from './read-pace.js';
import { type Waiter, waitForGrant } from './waiters.js';
import { WakeTimer } from './wake-timer.js';

export interface BudgetOptions {
  clock: Clock;
  /** A cap below the gateway's limit, in requests per rolling minute (`--rpm N`). Default: none. */
  maxPerMinute?: number;
  /** Extra wait after a reset, for clock skew between here and the gateway. Default 250 ms. */
  resetMarginMs?: number;
  /** Source of jitter in [0, 1). Default Math.random. */
  random?: () => number;
  /**
   * The part of each window this process may use, in (0, 1]. Below 1 when processes that shared a
   * budget go on alone: each takes its share of what the gateway says is left. Default 1.
   */
  share?: number;
  /** What an earlier budget knew, to start from instead of nothing. */
  initial?: Partial<Omit<BudgetSnapshot, 'waiting'>>;
  /**
   * The window's length as an earlier budget learned it, which this one goes on learning: a budget
   * that takes over need not wait three windows to pace its reads. Default: learned afresh.
   */
  window?: WindowLength;
  /**
   * Send times (clock ms, oldest first) an earlier budget counted against `maxPerMinute`: a budget
   * that takes over mid-window must not forget the last minute's requests and allow a burst.
   */
  sentAt?: readonly number[];
  /**
   * The queue of requests to grant. A RedisBudget passes its own, which outlives this budget: when
   * it stops using this one (`close`), the requests still waiting stay in the queue and no grant is lost.
   * Default: a queue of this budget's own.
   */
  waiters?: Waiter[];
  /**
   * Turns a grant into the release function its requester gets, when the owner of `waiters` keeps
   * the count of grants across budgets; that owner then calls `releaseUnanswered` once per grant.
   * Default: this budget's own release.
   */
  onGrant?: (sentAt: number) => () => void;
  /**
   * The reads the run's tasks in flight are expected to make, for `hasSpareRoom` to leave room for.
   * Default: none known, no spare room ever.
   */
  forecast?: ReadForecast;
}

/**
 * One request budget per API key, shared by every request of a run. It learns the gateway's
 * window from `X-RateLimit-Limit`, `-Remaining` and `-Reset` on every answer and never sends
 * more than the window has left, counting requests still unanswered as spent. Before the first
 * answer it is cautious: one request at a time. A 429 pauses everything until the reset.
 *
 * Reads of tasks in flight go first, then submissions, then the rest: a read may find a task ended
 * and free its slot, and a submission puts a free slot to work. Once the window's length is known,
 * reads take it no faster than evenly (`readPaceTime`); what waits behind a held read goes.
 */
export class RateBudget implements RequestGate, Budget {
  private readonly clock: Clock;
  private readonly maxPerMinute: number | undefined;
  private readonly resetMarginMs: number;
  private readonly random: () => number;
  private readonly share: number;
  private limit: number | undefined;
  /** The gateway's latest count for the current window; requests still unanswered come off it. */
  private remaining: number | undefined;
  private resetAt: number | undefined;
  private unanswered = 0;
  private pausedUntil = 0;
  private readonly sentAt: number[];
  private readonly waiters: Waiter[];
  private readonly onGrant: ((sentAt: number) => () => void) | undefined;
  private readonly forecast: ReadForecast | undefined;
  /** The length of the gateway's window, learned from the resets of successive windows; until then reads are not paced. */
  private readonly window: WindowLength;
  private readonly wake: WakeTimer;
  private closed = false;
  /** 429s seen: the budget should keep this at one at most per limit change. */
  rateLimitedCount = 0;

  constructor(options: BudgetOptions) {
    this.clock = options.clock;
    this.wake = new WakeTimer(this.clock, () => this.pump());
    this.maxPerMinute = options.maxPerMinute;
    this.resetMarginMs = options.resetMarginMs ?? 250;
    this.random = options.random ?? Math.random;
    this.share = options.share ?? 1;
    if (!(this.share > 0 && this.share <= 1))
      throw new Error(`Internal error: a budget's share must be in (0, 1], got ${this.share}`);
    const initial = options.initial ?? {};
    this.limit = initial.limit;
    this.remaining = initial.remaining === undefined ? undefined : this.shareOf(initial.remaining);
    this.resetAt = initial.resetAt;
    this.unanswered = initial.unanswered ?? 0;
    this.pausedUntil = initial.pausedUntil ?? 0;
    this.sentAt = [...(options.sentAt ?? [])].sort((a, b) => a - b);
    this.waiters = options.waiters ?? [];
    this.onGrant = options.onGrant;
    this.forecast = options.forecast;
    this.window = options.window ?? new WindowLength();
  }

  /** This process's part of a count of requests the whole key has left. */
  private shareOf(count: number): number {
    return this.share === 1 ? count : Math.floor(count * this.share);
  }

  /** A request this budget counts as unanswered (one of `initial.unanswered`, or one granted under `onGrant`) got its answer. */
  releaseUnanswered(): void {
    this.release();
  }

  /** Grants what waits while there is room: for the owner of a shared `waiters` queue. */
  grantWaiting(): void {
    this.pump();
  }

  /** Grants nothing more; requests still waiting stay in the queue (for whoever shares it). */
  async close(): Promise<void> {
    this.closed = true;
    this.wake.cancel();
  }

  /** What the budget believes now, for logs and tests. */
  snapshot(): BudgetSnapshot {
    return {
      limit: this.limit,
      remaining: this.remaining,
      resetAt: this.resetAt,
      unanswered: this.unanswered,
      pausedUntil: this.pausedUntil,
      waiting: this.waiters.length,
    };
  }

  /**
   * Whether a request sent now would take room no one is expected to need before the window resets:
   * what is left of it beyond the requests unanswered and waiting and the reads the forecast expects
   * (and a tenth of the window, for requests not foreseen: submissions into the slots those reads free).
   * A poll of a task whose end is near but not yet due goes only then: a spare read costs nothing a
   * known request needs, and may free a slot early.
   */
  hasSpareRoom(): boolean {
    if (!this.forecast || this.closed) return false;
    const now = this.clock.now();
    // A pause, the per-minute cap, a spent window or the reads' pace: no read may go now, spare or not.
    if (this.nextSendTime(now) > now || this.readPaceTime(now) > now) return false;
    const window = this.currentWindow(now);
    if (!window) return false;
    const free =
      window.remaining - this.unanswered - this.waiters.length - Math.ceil((this.limit ?? window.remaining) / 10);
    return free > 0 && this.forecast.readsBefore(window.resetAt, free) < free;
  }

  /**
   * What the current window has left and when it resets: as the latest answer told, or, once that
   * window is over and no answer has told of the next, a learned window's full count (as
   * `nextSendTime` assumes) until its end. Without that, there was no room to spare from a window's
   * reset until an answer told of the next: where little is sent (a run's last long tasks, each
   * read on its schedule alone), the spare reads due meanwhile were dropped. Undefined when nothing
   * is known.
   */
  private currentWindow(now: number): { remaining: number; resetAt: number } | undefined {
    // Called after nextSendTime, which has rolled a window past its reset over to the full count.
    if (this.remaining === undefined) return undefined;
    if (this.resetAt !== undefined)
      return now < this.resetAt ? { remaining: this.remaining, resetAt: this.resetAt } : undefined;
    const windowMs = this.window.ms;
    let endsAt = this.window.nextEnd();
    if (windowMs === undefined || endsAt === undefined) return undefined;
    while (endsAt <= now) endsAt += windowMs;
    return { remaining: this.remaining, resetAt: endsAt };
  }

  acquire(signal?: AbortSignal, purpose?: RequestPurpose): Promise<() => void> {
    return waitForGrant(this.waiters, signal, () => this.pump(), purpose);
  }

  /** The rate-limit listener: every answer's headers come through here. */
  readonly observe = (observation: RateLimitObservation): void => {
    const now = this.clock.now();
    if (observation.limit !== undefined) this.limit = observation.limit;
    this.window.observeAnswer(observation, now);
    const { resetAt, remaining } = observation;
    if (resetAt !== undefined && remaining !== undefined && resetAt > now) {
      if (this.resetAt === undefined || resetAt > this.resetAt) {
        this.resetAt = resetAt;
        this.remaining = this.shareOf(remaining);
      } else if (resetAt === this.resetAt) {
        // Answers can arrive out of order; within one window the smallest count is the latest.
        this.remaining = Math.min(this.remaining ?? remaining, this.shareOf(remaining));
      }
    }
    if (observation.status === 429) {
      this.rateLimitedCount++;
      this.remaining = 0;
      const wait = observation.retryAfterMs ?? (resetAt !== undefined ? resetAt - now : 60_000);
      // Jitter spreads the clients that were refused together.
      const until = now + wait + this.resetMarginMs + this.random() * Math.min(1000, wait * 0.1);
      this.pausedUntil = Math.max(this.pausedUntil, until);
    }
    this.pump();
  };

  /** The earliest moment a read of a task in flight may go (see read-pace.ts). */
  private readPaceTime(now: number): number {
    const state = {
      windowMs: this.window.ms,
      limit: this.limit === undefined ? undefined : this.shareOf(this.limit),
      remaining: this.remaining,
      unanswered: this.unanswered,
      endsAt: this.resetAt ?? this.window.nextEnd(),
    };
    return readPaceTime(state, now);
  }

  private release(): void {
    this.unanswered = Math.max(0, this.unanswered - 1);
    this.pump();
  }

  /** Grants waiting requests while the budget has room; otherwise wakes up when it may have. */
  private pump(): void {
    if (this.closed) return;
    for (;;) {
      if (this.waiters.length === 0) break;
      const now = this.clock.now();
      const next = this.nextSendTime(now);
      if (next > now) {
        this.wake.wakeAt(next);
        return;
      }
      // Reads held by their pace let what waits behind them go.
      const readsAt = this.readPaceTime(now);
      const index = readsAt > now ? this.waiters.findIndex((w) => w.purpose !== 'task-read') : 0;
      if (index < 0) {
        this.wake.wakeAt(readsAt);
        return;
      }
      const [waiter] = this.waiters.splice(index, 1) as [Waiter];
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.unanswered++;
      // Send times matter only to a per-minute cap.
      if (this.maxPerMinute !== undefined) this.sentAt.push(now);
      if (this.onGrant) {
        waiter.resolve(this.onGrant(now));
        continue;
      }
      let released = false;
      waiter.resolve(() => {
        if (released) return;
        released = true;
        this.release();
      });
    }
    this.wake.cancel();
  }

  /** The earliest moment another request may go; `now` when one may go at once, Infinity to wait for an answer. */
  private nextSendTime(now: number): number {
    if (now < this.pausedUntil) return this.pausedUntil;
    if (this.resetAt !== undefined && now >= this.resetAt + this.resetMarginMs) {
      // The window rolled over: the full limit is available until an answer says otherwise.
      this.resetAt = undefined;
      this.remaining = this.limit === undefined ? undefined : Math.max(1, this.shareOf(this.limit));
    }
    if (this.remaining === undefined) {
      // Nothing known yet: one request at a time until the first answer tells the limit.
      if (this.unanswered > 0) return Infinity;
    } else if (this.remaining - this.unanswered <= 0) {
      if (this.resetAt !== undefined) return this.resetAt + this.resetMarginMs;
      return this.unanswered > 0 ? Infinity : now;
    }
    if (this.maxPerMinute !== undefined) {
      while (this.sentAt.length > 0 && this.sentAt[0]! <= now - 60_000) this.sentAt.shift();
      if (this.sentAt.length >= this.maxPerMinute) return this.sentAt[0]! + 60_000;
    }
    return now;
  }
}
