import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock, ClockTimer } from '../clock.js';
import type { RateLimitObservation } from '../gateway/rate-limit-headers.js';
import type { Budget, BudgetSnapshot } from './budget-interface.js';
import { RateBudget } from './budget.js';
import type { RedisPair } from './redis-connection.js';
import { ACQUIRE, OBSERVE, RELEASE, RENEW } from './redis-scripts.js';
import { type Waiter, waitForGrant } from './waiters.js';
import { WakeTimer } from './wake-timer.js';

export interface RedisBudgetOptions {
  clock: Clock;
  redis: RedisPair;
  /** The key's shared name (budgetScope): never the key itself. */
  scope: string;
  /** The Redis URL as it may be printed, for the warning when Redis is lost. */
  shownUrl: string;
  /** Told once, when Redis is first lost during the run. */
  warn: (message: string) => void;
  /** A cap below the gateway's limit, in requests per rolling minute, counted over every process. */
  maxPerMinute?: number;
  resetMarginMs?: number;
  /** How long a grant holds its place when its process stops renewing it (it died). Default 30 s. */
  leaseMs?: number;
  random?: () => number;
}

type Commands = Redis & {
  budgetAcquire(...args: Array<string | number>): Promise<number[]>;
  budgetObserve(...args: Array<string | number>): Promise<number>;
  budgetRelease(...args: Array<string | number>): Promise<number>;
  budgetRenew(...args: Array<string | number>): Promise<number>;
};

const KEEP_MS = 24 * 3600_000;
const MAX_WAIT_MS = 1000;

/**
 * The request budget of one key, shared by every process that runs on it: the window's state
 * lives in Redis and every change is one Lua script, so all processes follow one window and one
 * 429 pause. Each grant is a lease this process renews while it lives. When Redis is lost, the
 * process warns once and goes on with a local RateBudget started from the last shared state and
 * its share of the window; when Redis is back, it rejoins.
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
  private readonly waiters: Waiter[] = [];
  /**
   * Grants not yet released, by lease id: `local` releases a grant of the local fallback;
   * `inheritedBy` is the fallback that counted a shared grant as unanswered when Redis was lost.
   */
  private readonly live = new Map<string, { local?: () => void; inheritedBy?: RateBudget }>();
  private nextGrant = 1;
  private last: BudgetSnapshot = {
    limit: undefined,
    remaining: undefined,
    resetAt: undefined,
    unanswered: 0,
    pausedUntil: 0,
    waiting: 0,
  };
  private processes = 1;
  private local: RateBudget | undefined;
  private warned = false;
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
    const prefix = `pipeline:budget:{${options.scope}}`;
    this.keys = [`${prefix}:state`, `${prefix}:leases`, `${prefix}:sent`, `${prefix}:processes`];
    this.channel = `${prefix}:changed`;
    defineScripts(this.redis);
    const { subscriber } = options.redis;
    subscriber.on('message', (channel: string) => channel === this.channel && this.pump());
    void subscriber.subscribe(this.channel).catch(() => {});
    this.redis.on('close', () => this.lose());
    this.redis.on('ready', () => this.rejoin());
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

  acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.local) return this.acquireLocally(this.local, signal);
    return waitForGrant(this.waiters, signal, () => this.pump());
  }

  readonly observe = (observation: RateLimitObservation): void => {
    const now = this.clock.now();
    let pauseUntil = -1;
    if (observation.status === 429) {
      this.rateLimitedCount++;
      const wait = observation.retryAfterMs ?? (observation.resetAt !== undefined ? observation.resetAt - now : 60_000);
      pauseUntil = Math.round(now + wait + this.resetMarginMs + this.random() * Math.min(1000, wait * 0.1));
    }
    this.local?.observe(observation);
    if (this.local) return;
    const { status, limit = -1, remaining = -1, resetAt = -1 } = observation;
    this.redis
      .budgetObserve(...this.keys, now, status, limit, remaining, resetAt, pauseUntil, this.channel)
      .catch(() => this.lose());
  };

  async close(): Promise<void> {
    this.closed = true;
    this.wake.cancel();
    if (this.heartbeat) this.clock.clearTimer(this.heartbeat);
    await this.local?.close();
  }

  /** Asks Redis for as many grants as requests wait, one script at a time; waits for a change or the next moment. */
  private pump(): void {
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

  private async pumpOnce(): Promise<void> {
    if (this.waiters.length === 0 || this.local || this.closed) return;
    const now = this.clock.now();
    const first = this.nextGrant;
    let reply: number[];
    try {
      const cap = this.options.maxPerMinute ?? 0;
      const args = [now, this.waiters.length, this.leaseMs, this.resetMarginMs, cap, this.member, first, KEEP_MS];
      reply = await this.redis.budgetAcquire(...this.keys, ...args);
    } catch {
      this.lose();
      return;
    }
    const [granted = 0, next = now, limit, remaining, resetAt, pausedUntil = 0, unanswered = 0, processes = 1] = reply;
    const known = (value: number | undefined) => (value === undefined || value < 0 ? undefined : value);
    this.last = {
      limit: known(limit),
      remaining: known(remaining),
      resetAt: known(resetAt),
      unanswered,
      pausedUntil,
      waiting: 0,
    };
    this.processes = Math.max(1, processes);
    this.nextGrant += granted;
    for (let i = 0; i < granted; i++) this.grant(`${this.member}:${first + i}`);
    // Other processes' releases and answers wake this one through Redis; a message missed (the
    // subscriber reconnecting) costs at most a second, since the budget asks again by then.
    if (this.waiters.length > 0) this.wake.wakeAt(Math.min(next > now ? next : now + 1, now + MAX_WAIT_MS));
    else this.wake.cancel();
  }

  /** Hands one lease to the first waiter, or gives it back when the waiter left meanwhile. */
  private grant(id: string): void {
    this.live.set(id, {});
    const waiter = this.waiters.shift();
    if (!waiter) {
      this.release(id);
      return;
    }
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    let released = false;
    waiter.resolve(() => {
      if (released) return;
      released = true;
      this.release(id);
    });
  }

  private release(id: string): void {
    const grant = this.live.get(id);
    if (!grant) return;
    this.live.delete(id);
    grant.local?.();
    grant.inheritedBy?.releaseInherited();
    if (this.local || this.closed) return;
    // A lease that cannot be removed now expires by itself.
    this.redis.budgetRelease(...this.keys, id, this.channel).catch(() => this.lose());
  }

  private acquireLocally(local: RateBudget, signal: AbortSignal | undefined): Promise<() => void> {
    return local.acquire(signal).then((localRelease) => {
      const id = `${this.member}:${this.nextGrant++}`;
      this.live.set(id, { local: localRelease });
      return () => this.release(id);
    });
  }

  /** Redis is gone: warn once, and go on alone from the last shared state with this process's share. */
  private lose(): void {
    if (this.local || this.closed) return;
    if (!this.warned) {
      this.warned = true;
      this.options.warn(
        `warning: lost Redis at ${this.options.shownUrl}; going on with this process's own budget ` +
          `(1/${this.processes} of the window) and rejoining the shared budget when Redis is back`,
      );
    }
    const { limit, remaining, resetAt, pausedUntil } = this.last;
    const initial = { limit, remaining, resetAt, pausedUntil, unanswered: this.live.size };
    const share = 1 / this.processes;
    const local = new RateBudget({
      clock: this.clock,
      resetMarginMs: this.resetMarginMs,
      random: this.random,
      share,
      initial,
    });
    for (const grant of this.live.values()) grant.inheritedBy = local;
    this.local = local;
    this.wake.cancel();
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.acquireLocally(local, waiter.signal).then(waiter.resolve, waiter.reject);
    }
  }

  /** Redis is back: restore this process's leases there and follow the shared state again. */
  private rejoin(): void {
    if (!this.local || this.closed) return;
    const local = this.local;
    this.local = undefined;
    void local.close();
    this.renew();
    this.pump();
  }

  /** Renews this process's leases every third of a lease, so that only a dead process's grants expire. */
  private beat(): void {
    this.heartbeat = this.clock.setTimer(this.leaseMs / 3, () => {
      if (this.closed) return;
      this.renew();
      this.beat();
    });
  }

  private renew(): void {
    if (this.local) return;
    const expiry = this.clock.now() + this.leaseMs;
    this.redis.budgetRenew(...this.keys, expiry, this.member, ...this.live.keys()).catch(() => this.lose());
  }
}

function defineScripts(redis: Redis): void {
  if ('budgetAcquire' in redis) return;
  redis.defineCommand('budgetAcquire', { numberOfKeys: 4, lua: ACQUIRE });
  redis.defineCommand('budgetObserve', { numberOfKeys: 4, lua: OBSERVE });
  redis.defineCommand('budgetRelease', { numberOfKeys: 4, lua: RELEASE });
  redis.defineCommand('budgetRenew', { numberOfKeys: 4, lua: RENEW });
}
