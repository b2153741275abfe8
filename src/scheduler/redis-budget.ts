import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock, ClockTimer } from '../clock.js';
import type { RequestPurpose } from '../gateway/gate.js';
import type { RateLimitObservation } from '../gateway/rate-limit-headers.js';
import type { Budget, BudgetSnapshot } from './budget-interface.js';
import { WindowLength } from './read-pace.js';
import { RateBudget } from './budget.js';
import type { RedisPair } from './redis-connection.js';
import type { ReadForecast } from './read-forecast.js';
import { ACQUIRE, OBSERVE, RELEASE, RENEW, RESTORE } from './redis-scripts.js';
import { type Waiter, waitForGrant } from './waiters.js';
import { WakeTimer } from './wake-timer.js';

export interface RedisBudgetOptions {
  clock: Clock;
  redis: RedisPair;
  /** The key's shared name (budgetScope): never the key itself. */
  scope: string;
  /** The Redis URL as it may be printed, for the warning when Redis is lost. */
  shownUrl: string;
  /** Told each time Redis is lost during the run, and each time the budget is shared again. */
  warn: (message: string) => void;
  /** A cap below the gateway's limit, in requests per rolling minute, counted over every process. */
  maxPerMinute?: number;
  resetMarginMs?: number;
  /** How long a grant holds its place when its process stops renewing it (it died). Default 30 s. */
  leaseMs?: number;
  random?: () => number;
  /** The reads of tasks in flight, for the budget of an outage to keep room for (see RateBudget). */
  forecast?: ReadForecast;
}

type Commands = Redis & {
  budgetAcquire(...args: Array<string | number>): Promise<number[]>;
  budgetObserve(...args: Array<string | number>): Promise<number>;
  budgetRelease(...args: Array<string | number>): Promise<number>;
  budgetRenew(...args: Array<string | number>): Promise<number>;
  budgetRestore(...args: Array<string | number>): Promise<number>;
};

const KEEP_MS = 24 * 3600_000;
const MAX_WAIT_MS = 1000;
const MINUTE_MS = 60_000;

/** Who counts an unanswered request: the shared state in Redis, or the budget of an outage. */
type Counter = 'redis' | RateBudget;

/**
 * The request budget of one key, shared by every process that runs on it: the window's state
 * lives in Redis and every change is one Lua script, so all processes follow one window and one
 * 429 pause. Each grant is a lease this process renews while it lives. The reads of tasks in
 * flight take the shared window at the pace of read-pace.ts, by the window's length this process
 * learned; the others go by them.
 *
 * When Redis is lost, the process warns and goes on with a local RateBudget started from the
 * last shared state, its share of the window and of the `--rpm` cap, and its sends of the last
 * minute; when Redis is back, it rejoins and restores there its leases, its sends and what it
 * learned. Redis may come and go any number of times, in any order: the requests waiting stay in
 * one queue this budget owns, whichever budget grants from it, so each is granted exactly once;
 * and every request granted and not yet released is counted by the budget of the current mode,
 * handed over at each change, so each is released exactly once and counted while in flight.
 */
export class RedisBudget implements Budget {
  private readonly clock: Clock;
  private readonly redis: Commands;
  private readonly keys: string[];
  private readonly channel: string;
  private readonly member = randomBytes(8).toString('hex');
  private readonly leaseMs: number;
  private readonly resetMarginMs: number;
  private readonly random: () => number;
  private readonly cap: number | undefined;
  /** Requests waiting for a grant, in order, in every mode: the local budget of an outage grants from here too. */
  private readonly waiters: Waiter[] = [];
  /** Grants not yet released, by lease id, with who counts each: always the budget of the current mode. */
  private readonly live = new Map<string, Counter>();
  /** This process's sends of the last minute, oldest first (kept under a cap only): carried into every mode. */
  private readonly sent: Array<{ id: string; at: number }> = [];
  /** The other processes' sends of the last minute, as counted at `othersSeenAt` (the last shared answer). */
  private othersSent = 0;
  private othersSeenAt = 0;
  private nextGrant = 1;
  /** What this process knows of the gateway's window: the last shared state, with its own answers folded in. */
  private last: BudgetSnapshot = {
    limit: undefined,
    remaining: undefined,
    resetAt: undefined,
    unanswered: 0,
    pausedUntil: 0,
    waiting: 0,
  };
  private processes = 1;
  /** The window's length, learned from this process's answers: the shared acquire paces reads by it. */
  private readonly window = new WindowLength();
  private local: RateBudget | undefined;
  /** Counts changes of mode: Redis's answer to a command sent in an earlier mode is stale. */
  private epoch = 0;
  private closed = false;
  private pumping = false;
  private pumpAgain = false;
  private readonly wake: WakeTimer;
  private heartbeat: ClockTimer | undefined;
  /** 429s this process saw. */
  rateLimitedCount = 0;

  constructor(private readonly options: RedisBudgetOptions) {
    this.clock = options.clock;
    this.wake = new WakeTimer(this.clock, () => this.pump());
    this.redis = options.redis.commands as Commands;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.resetMarginMs = options.resetMarginMs ?? 250;
    this.random = options.random ?? Math.random;
    this.cap = options.maxPerMinute;
    const prefix = `pipeline:budget:{${options.scope}}`;
    this.keys = [`${prefix}:state`, `${prefix}:leases`, `${prefix}:sent`, `${prefix}:processes`];
    this.channel = `${prefix}:changed`;
    defineScripts(this.redis);
    const { subscriber } = options.redis;
    subscriber.on('message', (channel: string) => channel === this.channel && this.pump());
    const listen = () => void subscriber.subscribe(this.channel).catch(() => {});
    listen();
    // Again after each reconnection (the connection does not do it itself, see redis-connection.ts).
    subscriber.on('ready', listen);
    this.redis.on('close', () => this.lose());
    this.redis.on('ready', () => this.rejoin());
    // Counted among the key's processes from the start, not from its first request: a process whose
    // only answer came before another's first request would take the whole of the --rpm cap in an
    // outage (1/1 of it), while the other took its half.
    this.renew();
    this.beat();
  }

  /** True while the budget follows the shared state (Redis reachable). */
  get shared(): boolean {
    return this.local === undefined;
  }

  snapshot(): BudgetSnapshot {
    if (this.local) return this.local.snapshot();
    return { ...this.last, unanswered: this.live.size, waiting: this.waiters.length };
  }

  /**
   * Only in an outage, from the local budget: the shared window's spare room would be judged on
   * every process's expected reads, which this process does not know.
   */
  hasSpareRoom(): boolean {
    return this.local?.hasSpareRoom() ?? false;
  }

  acquire(signal?: AbortSignal, purpose?: RequestPurpose): Promise<() => void> {
    return waitForGrant(this.waiters, signal, () => this.pump(), purpose);
  }

  readonly observe = (observation: RateLimitObservation): void => {
    const now = this.clock.now();
    let pauseUntil = -1;
    if (observation.status === 429) {
      this.rateLimitedCount++;
      const wait = observation.retryAfterMs ?? (observation.resetAt !== undefined ? observation.resetAt - now : 60_000);
      pauseUntil = Math.round(now + wait + this.resetMarginMs + this.random() * Math.min(1000, wait * 0.1));
    }
    this.learn(observation, now, pauseUntil);
    if (this.local) {
      // It learns the window's length in `this.window`, which it was given.
      this.local.observe(observation);
      return;
    }
    this.window.observeAnswer(observation, now);
    const { status, limit = -1, remaining = -1, resetAt = -1 } = observation;
    this.redis
      .budgetObserve(...this.keys, now, status, limit, remaining, resetAt, pauseUntil, this.channel)
      .catch(this.lostIn(this.epoch));
  };

  async close(): Promise<void> {
    this.closed = true;
    this.wake.cancel();
    if (this.heartbeat) this.clock.clearTimer(this.heartbeat);
    await this.local?.close();
    // Out of the count of processes at once, not when its place would lapse: the others' share of
    // the window in an outage, and of the --rpm cap, is counted from it. Redis may be gone already.
    await this.redis.zrem(this.keys[3]!, this.member).catch(() => undefined);
  }

  /** Folds an answer into `last` as RateBudget.observe does, so that a later mode starts from it. */
  private learn(observation: RateLimitObservation, now: number, pauseUntil: number): void {
    const last = this.last;
    if (observation.limit !== undefined) last.limit = observation.limit;
    const { resetAt, remaining } = observation;
    if (resetAt !== undefined && remaining !== undefined && resetAt > now) {
      if (last.resetAt === undefined || resetAt > last.resetAt) {
        last.resetAt = resetAt;
        last.remaining = remaining;
      } else if (resetAt === last.resetAt) {
        last.remaining = Math.min(last.remaining ?? remaining, remaining);
      }
    }
    if (observation.status === 429) {
      last.remaining = 0;
      last.pausedUntil = Math.max(last.pausedUntil, pauseUntil);
    }
  }

  /** Grants what waits: from Redis when shared, else from the local budget. */
  private pump(): void {
    if (this.closed) return;
    if (this.local) {
      this.local.grantWaiting();
      return;
    }
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      do {
        this.pumpAgain = false;
        await this.pumpOnce();
      } while (this.pumpAgain && !this.local && !this.closed);
      this.pumping = false;
    })();
  }

  /** Asks Redis for as many grants as requests wait; waits for a change or the next moment. */
  private async pumpOnce(): Promise<void> {
    if (this.waiters.length === 0 || this.local || this.closed) return;
    const epoch = this.epoch;
    const now = this.clock.now();
    const wanted = this.waiters.length;
    // The reads of tasks in flight wait first (waiters.ts): the script paces them.
    const firstOther = this.waiters.findIndex((waiter) => waiter.purpose !== 'task-read');
    const reads = firstOther < 0 ? wanted : firstOther;
    const first = this.nextGrant;
    // Taken before the answer: a local budget that takes over meanwhile must not reuse these ids.
    this.nextGrant += wanted;
    let reply: number[];
    try {
      const pace = [this.window.ms ?? 0, reads, this.window.nextEnd() ?? -1];
      const args = [now, wanted, this.leaseMs, this.resetMarginMs, this.cap ?? 0, this.member, first, KEEP_MS, ...pace];
      reply = await this.redis.budgetAcquire(...this.keys, ...args);
    } catch {
      this.lostIn(epoch)();
      return;
    }
    const [
      granted = 0,
      next = now,
      limit,
      remaining,
      resetAt,
      pausedUntil = 0,
      ,
      processes = 1,
      sent = 0,
      readsGranted = 0,
    ] = reply;
    if (epoch !== this.epoch || this.closed) {
      // Granted in a mode that has ended: the waiters went on without these leases; give them back.
      for (let i = 0; i < granted; i++)
        this.redis.budgetRelease(...this.keys, `${this.member}:${first + i}`, this.channel).catch(() => {});
      return;
    }
    const known = (value: number | undefined) => (value === undefined || value < 0 ? undefined : value);
    // Merged as answers are (learn): the script ran before the answers that came back while its reply
    // was on the way, so its window must not undo what they taught (a fallback starting from it
    // would send into a window already spent).
    const window = { limit: known(limit), remaining: known(remaining), resetAt: known(resetAt) };
    this.learn({ status: 200, observedAt: now, ...window }, now, -1);
    this.last.pausedUntil = Math.max(this.last.pausedUntil, pausedUntil);
    this.processes = Math.max(1, processes);
    for (let i = 0; i < granted; i++) this.grant(`${this.member}:${first + i}`, now, i < readsGranted);
    if (this.cap !== undefined) {
      this.othersSent = Math.max(0, sent - this.recentSends(now).length);
      this.othersSeenAt = now;
    }
    // Other processes' releases and answers wake this one through Redis; a message missed (the
    // subscriber reconnecting) costs at most a second, since the budget asks again by then.
    if (this.waiters.length > 0) this.wake.wakeAt(Math.min(next > now ? next : now + 1, now + MAX_WAIT_MS));
    else this.wake.cancel();
  }

  /**
   * Hands one shared lease to the first waiter of its kind (a read of a task in flight, or any
   * other: the script granted the others while the reads' pace held them), or gives it back when
   * no such waiter is left (it left meanwhile).
   */
  private grant(id: string, at: number, read: boolean): void {
    const index = this.waiters.findIndex((waiter) => (waiter.purpose === 'task-read') === read);
    const [waiter] = index < 0 ? [] : this.waiters.splice(index, 1);
    if (!waiter) {
      this.redis.budgetRelease(...this.keys, id, this.channel).catch(this.lostIn(this.epoch));
      return;
    }
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(this.track(id, 'redis', at));
  }

  /** Counts a grant until its release, which it answers: callable any number of times, it releases once. */
  private track(id: string, counter: Counter, at: number): () => void {
    this.live.set(id, counter);
    if (this.cap !== undefined) {
      this.sent.push({ id, at });
      while (this.sent.length > 0 && this.sent[0]!.at <= at - MINUTE_MS) this.sent.shift();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(id);
    };
  }

  private release(id: string): void {
    const counter = this.live.get(id);
    if (counter === undefined) return;
    this.live.delete(id);
    if (counter !== 'redis') {
      counter.releaseUnanswered();
      return;
    }
    if (this.closed) return;
    // A lease that cannot be removed now expires by itself, or goes when this process rejoins.
    this.redis.budgetRelease(...this.keys, id, this.channel).catch(this.lostIn(this.epoch));
  }

  /** This process's sends in the rolling minute before `now`. */
  private recentSends(now: number): Array<{ id: string; at: number }> {
    return this.sent.filter((send) => send.at > now - MINUTE_MS);
  }

  /** A command of mode `epoch` failed: Redis is lost, unless the mode has changed since. */
  private lostIn(epoch: number): () => void {
    return () => {
      if (epoch === this.epoch) this.lose();
    };
  }

  /**
   * Redis is gone: go on alone from the last shared state, with this process's share of the
   * window and of the cap. The cap counts this process's own sends of the last minute at their
   * times, and the other processes' (as last counted in Redis) as if sent at that count, which is
   * no earlier than they were: so together the processes stay under the cap in every minute.
   */
  private lose(): void {
    if (this.local || this.closed) return;
    this.epoch++;
    this.wake.cancel();
    const now = this.clock.now();
    const share = 1 / this.processes;
    const cap = this.cap === undefined ? undefined : Math.max(1, Math.floor(this.cap * share));
    const carried = this.recentSends(now).map((send) => send.at);
    if (this.othersSeenAt > now - MINUTE_MS) for (let i = 0; i < this.othersSent; i++) carried.push(this.othersSeenAt);
    const { limit, remaining, resetAt, pausedUntil } = this.last;
    const local: RateBudget = new RateBudget({
      clock: this.clock,
      resetMarginMs: this.resetMarginMs,
      random: this.random,
      share,
      ...(cap === undefined ? {} : { maxPerMinute: cap }),
      initial: { limit, remaining, resetAt, pausedUntil, unanswered: this.live.size },
      window: this.window,
      sentAt: carried,
      waiters: this.waiters,
      onGrant: (at) => this.track(`${this.member}:${this.nextGrant++}`, local, at),
      ...(this.options.forecast ? { forecast: this.options.forecast } : {}),
    });
    for (const id of this.live.keys()) this.live.set(id, local);
    this.local = local;
    const limits = cap === undefined ? '' : ` and at most ${cap} requests a minute`;
    this.options.warn(
      `warning: lost Redis at ${this.options.shownUrl}; going on with this process's own budget ` +
        `(1/${this.processes} of the window${limits}) and rejoining the shared budget when Redis is back`,
    );
    local.grantWaiting();
  }

  /**
   * Redis is back: restore there this process's leases, its sends of the last minute and what it
   * learned of the window, then grant from the shared state again. Commands on one connection run
   * in order, so the next grant is asked after the restore; if Redis goes again before, the budget
   * falls back again with everything still counted.
   */
  private rejoin(): void {
    if (!this.local || this.closed || this.redis.status !== 'ready') return;
    const local = this.local;
    this.local = undefined;
    this.epoch++;
    void local.close();
    for (const id of this.live.keys()) this.live.set(id, 'redis');
    const now = this.clock.now();
    const { limit = -1, remaining = -1, resetAt = -1, pausedUntil } = this.last;
    const leases = [...this.live.keys()];
    const sends = this.recentSends(now).flatMap(({ id, at }) => [at, id]);
    const window = [limit, remaining, resetAt, pausedUntil];
    const args = [now, now + this.leaseMs, this.member, ...window, KEEP_MS, this.channel, leases.length];
    this.redis.budgetRestore(...this.keys, ...args, ...leases, ...sends).catch(this.lostIn(this.epoch));
    this.options.warn(`note: Redis at ${this.options.shownUrl} is back; sharing the budget again`);
    this.pump();
  }

  /**
   * Every third of a lease: renews this process's leases, so that only a dead process's grants
   * expire; or, during an outage, rejoins if the connection is ready (a command that timed out
   * makes the budget fall back without the connection closing, and no 'ready' follows then).
   */
  private beat(): void {
    this.heartbeat = this.clock.setTimer(this.leaseMs / 3, () => {
      if (this.closed) return;
      if (this.local) this.rejoin();
      else this.renew();
      this.beat();
    });
  }

  private renew(): void {
    if (this.local) return;
    const expiry = this.clock.now() + this.leaseMs;
    const epoch = this.epoch;
    this.redis
      .budgetRenew(...this.keys, expiry, this.member, ...this.live.keys())
      .then((processes) => {
        // The count of processes on the key, for the share of an outage: known without a request.
        if (epoch === this.epoch) this.processes = Math.max(1, Number(processes));
      })
      .catch(this.lostIn(epoch));
  }
}

function defineScripts(redis: Redis): void {
  if ('budgetAcquire' in redis) return;
  redis.defineCommand('budgetAcquire', { numberOfKeys: 4, lua: ACQUIRE });
  redis.defineCommand('budgetObserve', { numberOfKeys: 4, lua: OBSERVE });
  redis.defineCommand('budgetRelease', { numberOfKeys: 4, lua: RELEASE });
  redis.defineCommand('budgetRenew', { numberOfKeys: 4, lua: RENEW });
  redis.defineCommand('budgetRestore', { numberOfKeys: 4, lua: RESTORE });
}
