import { expectedMs } from '../actions/durations.js';
import type { LearnedDuration } from '../expected-durations.js';
import type { TaskResult } from '../gateway/types.js';
import {
  type LearnedReads,
  learnedReads,
  modelTaskSchedule,
  type PollSchedule,
  type QueuedStart,
} from '../scheduler/poller.js';

/**
 * How long after a deviation past the mean the first read goes. Little is needed: the read is
 * already late by the submission's answer, since the mean is the gateway's own processing time
 * (from its start, at its submission unless queued) and the schedule counts from when its answer
 * arrived; this covers timer and timestamp granularity.
 * Every task read once holds its slot this long past its end: bench mixed-chain by hand held 724 to
 * 737 slot-seconds for 692 of processing at 100 ms (six runs), 712 to 731 at 25 ms (ten runs).
 */
const FIRST_READ_MARGIN_MS = 25;

/**
 * How long after the top of a model's spread its second read goes. More than the first read's
 * margin: a task ending just before the top is common, and a read that misses it waits a fifth
 * of the task's time more; on the local gateway a task was still running 32 ms past its start plus
 * its processing time (its results being written).
 */
const TOP_READ_MARGIN_MS = 100;

/**
 * The least standard deviation of a model's durations for spare reads: below it the first read,
 * just past a deviation past the mean, is already close to every task's end.
 */
const SPARE_SPREAD_MS = 200;

/**
 * The least time between two spare reads of a task: a read saves at most the time since the one
 * before, so a model whose times vary little is read less often, and the room goes to the tasks
 * whose end is least certain.
 */
const SPARE_STEP_MS = 500;

/** How much work a model input is, in the units the model's time grows with. */
export function workUnits(type: string, input: Record<string, unknown>): number {
  if (type === 'text-to-image')
    return (typeof input.n === 'number' ? input.n : 1) * (input.resolution === '2k' ? 1.8 : 1);
  if (type.endsWith('-to-video')) return (typeof input.duration === 'number' ? input.duration : 5) / 5;
  if (type === 'image-to-image') return input.sequential_image_generation === 'auto' ? 2 : 1;
  return 1;
}

/** How long a task ran, in milliseconds: the gateway's processing time, else its submit-to-end. */
export function processingTime(result: TaskResult): number | undefined {
  if (result.durationMs !== undefined && result.durationMs > 0) return result.durationMs;
  if (result.submitTime !== undefined && result.endTime !== undefined) return result.endTime - result.submitTime;
  return undefined;
}

/** How long a task waited in the gateway's queue before it ran, when the gateway's figures tell it. */
export function queueWait(result: TaskResult): number | undefined {
  const { durationMs, submitTime, endTime } = result;
  if (durationMs === undefined || durationMs <= 0 || submitTime === undefined || endTime === undefined)
    return undefined;
  return Math.max(0, endTime - submitTime - durationMs);
}

/** How much a new wait moves the mean of the queue waits: the run's queue changes as it goes. */
const WAIT_WEIGHT = 0.25;

/**
 * Learns, per model, how long a task takes once running, per unit of work: an exponentially
 * weighted mean and variance of the tasks finished so far, starting from the first guess for the
 * model's type. The poller asks it when to look first. A task the gateway queued (`pending` in the
 * submission's answer, as with `queue_ahead`) is read from when it likely started: where the run
 * replays the gateway's places (GatewayPlaces, in a run that is the key's one user of them), the
 * start that replay foresees, moving with it; else (a worker) the run's mean wait in the queue past
 * its submission, then, once a read finds it running, from between the last moment it was seen
 * pending and that read (see `PollSchedule.fromStart`).
 */
export class DurationModel {
  private readonly perUnit = new Map<string, LearnedDuration>();
  /** The mean time this run's queued tasks waited in the gateway's queue; not kept across runs. */
  private meanWaitMs: number | undefined;
  /** Models whose time one task is probing now, nothing being learned of them yet. */
  private readonly probing = new Set<string>();
  /** Told when a model's first time is learned: the tasks waiting on a guess. */
  private readonly onFirstLearned = new Map<string, Set<() => void>>();

  /**
   * `earlier`: what earlier runs learned (a new run polls well from its first task);
   * `onLearned`: told each model's new figures, to keep them for later runs and other processes.
   */
  constructor(
    earlier: Record<string, LearnedDuration> = {},
    private readonly onLearned?: (slug: string, learned: LearnedDuration) => void,
  ) {
    for (const [slug, learned] of Object.entries(earlier)) this.perUnit.set(slug, learned);
  }

  /** Expected milliseconds from its start (its submission, unless queued) to the end of a task of `slug` with this input. */
  expected(slug: string, type: string, input: Record<string, unknown>): number {
    const learned = this.perUnit.get(slug);
    const units = workUnits(type, input);
    return Math.round((learned?.mean ?? expectedMs(type)) * units);
  }

  /**
   * When to look first at a task, in milliseconds after its start (its submission, unless the gateway
   * queued it; see `pollSchedule`): one standard deviation
   * past the mean, so that most tasks are done at the first poll (with steady durations, just
   * after the mean). Undefined before anything is learned.
   */
  firstPoll(slug: string, type: string, input: Record<string, unknown>): number | undefined {
    const times = this.learnedTimes(slug, type, input);
    return times && Math.round(times.mean + times.deviation + FIRST_READ_MARGIN_MS);
  }

  /**
   * The second scheduled read of a task whose model's times vary (a deviation of SPARE_SPREAD_MS or
   * more), in milliseconds after its start: the top of their spread, √3 deviations past the mean
   * (where times spread evenly, none ends later). The first read, a deviation past the mean, finds
   * about one task in five still running; read a fifth of its time later (the growing waits), a
   * 10 s video ending just after it held its slot 2 s for nothing, a 1 s image 1 s. Read at the
   * top, it costs the same one read and waits a few hundred milliseconds at most. Undefined where
   * times are steady or not learned.
   */
  spreadTop(slug: string, type: string, input: Record<string, unknown>): number | undefined {
    const times = this.learnedTimes(slug, type, input);
    if (!times || !(times.deviation >= SPARE_SPREAD_MS)) return undefined;
    return Math.round(times.mean + Math.sqrt(3) * times.deviation + TOP_READ_MARGIN_MS);
  }

  /**
   * How long a task found still `pending` (not started) waits before its next read, in
   * milliseconds: a deviation under the mean, about the least it takes once started. Undefined
   * before anything is learned, or where that leaves nothing.
   */
  pendingWait(slug: string, type: string, input: Record<string, unknown>): number | undefined {
    const times = this.learnedTimes(slug, type, input);
    const early = times ? Math.round(times.mean - times.deviation) : 0;
    return early > 0 ? early : undefined;
  }

  /** The learned mean time of a task of `slug` with this input, and its standard deviation, in milliseconds. */
  private learnedTimes(
    slug: string,
    type: string,
    input: Record<string, unknown>,
  ): { mean: number; deviation: number } | undefined {
    const learned = this.perUnit.get(slug);
    if (!learned) return undefined;
    const units = workUnits(type, input);
    return { mean: learned.mean * units, deviation: Math.sqrt(learned.variance) * units };
  }

  /**
   * Spare reads (milliseconds after the task's start, as `firstPoll`; see PollSchedule.spareAt): from a standard
   * deviation before the mean to two past it, every half deviation and SPARE_STEP_MS at least, but
   * none just at the first read (a deviation past the mean). None while the model's durations are
   * steady (a deviation under SPARE_SPREAD_MS: the first read is just past the mean anyway) or not
   * yet learned.
   */
  spareReads(slug: string, type: string, input: Record<string, unknown>): number[] {
    const times = this.learnedTimes(slug, type, input);
    if (!times) return [];
    const { mean, deviation: spread } = times;
    if (!(spread >= SPARE_SPREAD_MS)) return [];
    const step = Math.max(spread / 2, SPARE_STEP_MS);
    const firstRead = this.firstPoll(slug, type, input)!;
    const reads: number[] = [];
    for (let at = mean - spread; at < mean + 2 * spread; at += step)
      if (at > 0 && Math.abs(at - firstRead) >= step / 2) reads.push(Math.round(at));
    return reads;
  }

  /**
   * How to read a task of `slug` submitted at `submittedAt` (see `modelTaskSchedule`): learned, on
   * a guess as the model's probe, or on a guess waiting for what the probe learns. `guess` is what
   * the submitter knew when this model knows nothing (a worker's job carries the coordinator's).
   * Call `done` when the task has ended, so that another task may probe if this one taught nothing.
   */
  pollSchedule(
    slug: string,
    type: string,
    input: Record<string, unknown>,
    task: {
      now: number;
      submittedAt: number;
      maxIntervalMs: number;
      webhook: boolean;
      guess?: { expectedMs: number; firstPollMs?: number };
      /** The submission's answer said `pending`: the task waits in the gateway's queue. */
      queued?: boolean;
      /** Where the run foresees a queued task's start (GatewayPlaces); without it, from the mean wait. */
      place?: QueuedStart;
    },
  ): { schedule: Omit<PollSchedule, 'delivered' | 'signal'>; done: () => void } {
    const known = this.perUnit.has(slug);
    // A queued task is expected to start where the run foresees it, else after the run's mean wait:
    // its reads count from then.
    const foreseen = task.queued && !task.webhook && known ? task.place : undefined;
    const startsAt = foreseen
      ? foreseen.expectedStart()
      : task.submittedAt + (task.queued ? (this.meanWaitMs ?? 0) : 0);
    const expectedMs = known
      ? this.expected(slug, type, input)
      : (task.guess?.expectedMs ?? this.expected(slug, type, input));
    const firstPollMs = known ? this.firstPoll(slug, type, input) : task.guess?.firstPollMs;
    const guessed = firstPollMs === undefined && !task.webhook;
    const probe = guessed && !this.probing.has(slug);
    if (probe) this.probing.add(slug);
    const schedule = modelTaskSchedule(task.now, {
      expectedMs,
      firstPollMs,
      submittedAt: startsAt,
      maxIntervalMs: task.maxIntervalMs,
      webhook: task.webhook,
      probe,
    });
    // Spare reads as clock times, where there are any.
    const spares = (from = startsAt): { spareAt?: number[] } => {
      const offsets = this.spareReads(slug, type, input);
      return offsets.length > 0 ? { spareAt: offsets.map((ms) => from + ms) } : {};
    };
    // The second read at the top of the spread, for a task read as a learned one from its start.
    const top = (from = startsAt): { thenAt?: number } => {
      const offset = this.spreadTop(slug, type, input);
      return offset === undefined ? {} : { thenAt: from + offset };
    };
    if (!task.webhook) Object.assign(schedule, spares(), known ? top() : {});
    const pendingMs = this.pendingWait(slug, type, input);
    if (pendingMs !== undefined) schedule.pendingMs = pendingMs;
    // The reads of a task that started at `startedAt`, once its model is learned.
    const readsFrom = (startedAt: number) => {
      const first = this.firstPoll(slug, type, input);
      return first === undefined ? undefined : { readAt: startedAt + first, ...spares(startedAt), ...top(startedAt) };
    };
    // A foreseen task's model is known, so its reads are too.
    if (foreseen) schedule.queued = { start: foreseen, readsFrom: (startedAt) => readsFrom(startedAt)! };
    // Only once a wait is learned: a gateway that reports no processing time teaches submit-to-end,
    // which counts the wait, and its tasks are best read from their submission.
    else if (task.queued && !task.webhook && this.meanWaitMs !== undefined)
      // The expected start, if the reads allow it: after the last pending read, by the running one.
      schedule.fromStart = (waitedUntil, runningAt) => readsFrom(Math.min(runningAt, Math.max(waitedUntil, startsAt)));
    if (!guessed || probe) return { schedule, done: () => probe && this.probing.delete(slug) };
    let wake = () => {};
    const learned = new Promise<LearnedReads>((resolve) => {
      wake = () =>
        resolve({
          ...learnedReads(startsAt + this.firstPoll(slug, type, input)!, this.expected(slug, type, input)),
          ...spares(),
          ...top(),
        });
    });
    const waiting = this.onFirstLearned.get(slug) ?? new Set();
    waiting.add(wake);
    this.onFirstLearned.set(slug, waiting);
    return { schedule: { ...schedule, learned }, done: () => waiting.delete(wake) };
  }

  /**
   * Learns from a task that ended: a success teaches its model's processing time (else its
   * submit-to-end, else `elapsedMs`, the time seen here) and, for a task the gateway queued at its
   * submission, the wait in its queue.
   */
  observeEnded(
    slug: string,
    type: string,
    input: Record<string, unknown>,
    result: TaskResult,
    seen: { queued: boolean; elapsedMs?: number },
  ): void {
    if (result.state !== 'succeeded') return;
    const ran = processingTime(result) ?? seen.elapsedMs;
    if (ran !== undefined) this.observe(slug, type, input, ran);
    const wait = seen.queued ? queueWait(result) : undefined;
    if (wait !== undefined) this.observeWait(wait);
  }

  /** A task that was queued at its submission ran after waiting `waitMs` in the gateway's queue. */
  observeWait(waitMs: number): void {
    if (!(waitMs >= 0)) return;
    this.meanWaitMs =
      this.meanWaitMs === undefined ? waitMs : this.meanWaitMs + WAIT_WEIGHT * (waitMs - this.meanWaitMs);
  }

  observe(slug: string, type: string, input: Record<string, unknown>, elapsedMs: number): void {
    const units = workUnits(type, input);
    if (!(elapsedMs > 0) || !(units > 0)) return;
    const sample = elapsedMs / units;
    const current = this.perUnit.get(slug);
    // The first samples count fully; later ones move the mean by a quarter.
    const weight = current ? Math.max(0.25, 1 / (current.samples + 1)) : 1;
    const mean = current ? current.mean + weight * (sample - current.mean) : sample;
    // The weighted variance, updated in the same step (West's incremental form).
    const variance = current ? (1 - weight) * (current.variance + weight * (sample - current.mean) ** 2) : 0;
    const learned = { mean, variance, samples: (current?.samples ?? 0) + 1 };
    this.perUnit.set(slug, learned);
    this.onLearned?.(slug, learned);
    const waiting = this.onFirstLearned.get(slug);
    this.onFirstLearned.delete(slug);
    for (const wake of waiting ?? []) wake();
  }
}
