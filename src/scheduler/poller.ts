import { type Clock, sleep } from '../clock.js';
import { LinkedAbort } from '../linked-abort.js';
import type { GatewayClient } from '../gateway/client.js';
import { abortedFailure, type GatewayFailure } from '../gateway/failures.js';
import { isPending, type TaskResult } from '../gateway/types.js';
import { formatDuration } from '../duration.js';
import { err, ok, type Result } from '../result.js';
import type { TaskReads } from './read-forecast.js';

/**
 * How much longer each wait of a probe is than the one before: its read comes at most half the
 * task's time past its end, and the tasks waiting for what it learns wait as long. Doubling let a
 * 20 s video be seen at 26 s, holding every first video's slot 6 s; at 1.5 it is seen at 21.8 s,
 * for one read more.
 */
const PROBE_GROWTH = 1.5;

/** When to read a task: the first wait, then waits growing by half up to a ceiling. */
export interface PollSchedule {
  /** Milliseconds before the first read. */
  firstDelayMs: number;
  /** The wait after the first read that finds the task still running. */
  intervalMs: number;
  /** The longest wait between two reads. */
  maxIntervalMs: number;
  /**
   * Until a wait reaches this length, each wait is half as long again as the one before (a task
   * whose time is only guessed is probed early: 1 s, 2 s, 3.5 s, 5.75 s, …, in case the guess is far
   * too long).
   */
  rampToMs?: number;
  /**
   * From this clock time on, each wait is half as long again as the one before; until then the
   * waits stay even (a first guess is checked at even steps up to the guess).
   */
  growFrom: number;
  /**
   * Resolves when the model's time has been learned (from another task) while this one waits on a
   * guess: from then on it is read as a learned task is.
   */
  learned?: Promise<LearnedReads>;
  /** With webhooks: resolves when the result arrives; reads become a slow safety net. */
  delivered?: Promise<TaskResult>;
  /** How long after the call a task still running is given up on (a `timeout` failure). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Told when each read is due, for the budget to leave room for it (see ReadForecast). */
  expectedReads?: TaskReads;
  /**
   * Clock times, ascending, at which the task is read besides its schedule, but only if
   * `hasSpareRoom` says the budget has room no known request needs: where durations vary, a task that
   * ends early (or late, between two reads of the schedule) is seen sooner, at no cost to anything else.
   */
  spareAt?: readonly number[];
  hasSpareRoom?: () => boolean;
  /**
   * The clock time of the read after the first, where the model's times vary: the top of their
   * spread (DurationModel.spreadTop); the growing waits start after it. Undefined: they start at the
   * first read.
   */
  thenAt?: number;
  /**
   * The least wait after a read that finds the task still `pending`, not yet started (it waits in
   * the gateway's queue, as with `queue_ahead`): once started it takes about this long, so a read
   * before then would find it running at best. By hand, on the bench's chain-items scenario with
   * `queue_ahead: 4`, 131 of 1,063 reads (12 %) had found a task pending.
   */
  pendingMs?: number;
  /**
   * For a task queued at its submission (`pending` in the answer): where its reads go once a read
   * finds it running, given the last moment it was known pending and the moment of that read (its
   * start lies between). Undefined from it, or no such function: the schedule goes on as it was.
   * Read from its submission, a task that waited in the queue was read early by its wait, and one
   * that started at once late by the run's mean wait.
   */
  fromStart?: (waitedUntil: number, runningAt: number) => StartedReads | undefined;
  /**
   * For a task queued at its submission whose start the run foresees (GatewayPlaces): until a read
   * finds it running, its reads go from the start expected now (`readsFrom`), and move with it;
   * after a read that finds it still pending, no sooner than the schedule's interval, growing by
   * half at each (the replay was wrong: another process's tasks were ahead, or fewer places).
   * In place of `fromStart` and `pendingMs`.
   */
  queued?: { start: QueuedStart; readsFrom: (startedAt: number) => StartedReads };
}

/** The reads of a task from its start: the first, the spare ones, and the one at the top of its spread. */
export interface StartedReads {
  readAt: number;
  spareAt?: readonly number[];
  thenAt?: number;
}

/** The start of a task waiting in the gateway's queue, as the run foresees it (see GatewayPlaces). */
export interface QueuedStart {
  expectedStart(): number;
  /** Resolves when the expected start may have moved; `signal` stops listening. */
  moved(signal: AbortSignal): Promise<void>;
  /** A read at `at` found the task still waiting. */
  seenPending(at: number): void;
  /** A read at `at` found the task running. */
  seenRunning(at: number): void;
}

/** How a task is read once its model's time is known. */
export interface LearnedReads {
  /** The clock time of the first read: when a typical task submitted with this one is done. */
  firstAt: number;
  /** Clock times of spare reads (see PollSchedule.spareAt). */
  spareAt?: readonly number[];
  /** The read after the first (see PollSchedule.thenAt). */
  thenAt?: number;
  /** The wait after a read that finds it still running, growing by half from there. */
  intervalMs: number;
}

/** A task read as a learned one: first at `firstAt`, then from a fifth of its expected time, growing by half. */
export const learnedReads = (firstAt: number, expectedMs: number): LearnedReads => ({
  firstAt,
  intervalMs: Math.max(1000, Math.round(expectedMs / 5)),
});

export interface Waited {
  result: TaskResult;
  polls: number;
}

/**
 * The schedule for a task the engine submitted. Once the model's time is learned, the first poll
 * comes when a typical task is done (a standard deviation past the mean), later ones back off from
 * a fifth of that time. Before anything is learned the first guess may be far off either way, and
 * one task of the model at a time probes it (`probe`): reads at 1 s, 2 s, 3.5 s, … (PROBE_GROWTH) up
 * to a quarter of the guess, then every quarter until the guess has passed, and back off from there. The tasks
 * submitted meanwhile wait for what the probe learns (`learned`), or read first at the guess if it
 * has learned nothing by then: a batch's first wave costs one probe's reads, not one per task.
 * With a webhook the first poll waits three times as long: it is only there in case the delivery
 * is lost.
 */
export function modelTaskSchedule(
  now: number,
  task: {
    expectedMs: number;
    firstPollMs: number | undefined;
    submittedAt: number;
    maxIntervalMs: number;
    webhook: boolean;
    /** Nothing learned: this task is the one that probes the model's time (see above). */
    probe?: boolean;
  },
): Omit<PollSchedule, 'delivered' | 'signal' | 'learned'> {
  const { expectedMs, firstPollMs, submittedAt, maxIntervalMs } = task;
  const quarter = Math.max(1000, Math.round(expectedMs / 4));
  if (task.webhook || firstPollMs !== undefined) {
    const reads = learnedReads(submittedAt + Math.round(task.webhook ? expectedMs * 3 : firstPollMs!), expectedMs);
    return {
      firstDelayMs: Math.max(200, reads.firstAt - now),
      intervalMs: reads.intervalMs,
      maxIntervalMs,
      growFrom: Number.NEGATIVE_INFINITY,
    };
  }
  if (task.probe)
    return {
      firstDelayMs: Math.max(200, submittedAt + 1000 - now),
      intervalMs: 1000,
      maxIntervalMs,
      rampToMs: quarter,
      growFrom: submittedAt + expectedMs,
    };
  return {
    firstDelayMs: Math.max(200, submittedAt + expectedMs - now),
    intervalMs: quarter,
    maxIntervalMs,
    growFrom: Number.NEGATIVE_INFINITY,
  };
}

/** The schedule for a task read by id (`pipeline task wait`): at once, then 2 s growing by half to 15 s. */
export const byIdSchedule = (): Omit<PollSchedule, 'timeoutMs' | 'signal'> => ({
  firstDelayMs: 0,
  intervalMs: 2000,
  maxIntervalMs: 15_000,
  growFrom: Number.NEGATIVE_INFINITY,
});

/**
 * Waits for a task to end, spending as few reads of the budget as the schedule allows; every read
 * goes through the client's gate, so it keeps within the rate limit. A failed read, a stop of the
 * signal (`aborted`) and a passed deadline (`timeout`) come back as failures.
 */
export async function waitForTask(
  client: GatewayClient,
  clock: Clock,
  taskId: string,
  schedule: PollSchedule,
): Promise<Result<Waited, GatewayFailure>> {
  const { signal, delivered, timeoutMs, expectedReads } = schedule;
  const deadline = timeoutMs === undefined ? undefined : clock.now() + timeoutMs;
  let learned = schedule.learned;
  let polls = 0;
  /** The clock time of the next read of the schedule; spare reads come before it, if they may. */
  let readAt = clock.now() + schedule.firstDelayMs;
  // Spare reads need a budget to say when there is room: without one, none (and no wake-up for them).
  const { hasSpareRoom } = schedule;
  let spares = hasSpareRoom ? schedule.spareAt : undefined;
  let spare = sparesBefore(spares, clock.now(), readAt);
  /** The read after the next one of the schedule, where the model's times vary. */
  let thenAt = schedule.thenAt;
  /** The next read of the schedule at `at`, and the spare reads given before it, from `now` on. */
  const readNext = (now: number, at: number, spareAt: readonly number[] | undefined, then?: number) => {
    readAt = at;
    spares = hasSpareRoom ? spareAt : undefined;
    spare = sparesBefore(spares, now, readAt);
    thenAt = then;
  };
  let interval = schedule.intervalMs;
  let rampTo = schedule.rampToMs ?? 0;
  let growFrom = schedule.growFrom;
  /** The last moment the task was known to wait in the gateway's queue, while that matters. */
  let pendingSince = schedule.fromStart ? clock.now() : undefined;
  /** While a queued task is not seen running: its reads go from its expected start. */
  let queued = schedule.queued;
  /** After a read that found the queued task pending, the next comes no sooner than this. */
  let notBefore = Number.NEGATIVE_INFINITY;
  for (;;) {
    const now = clock.now();
    if (queued) {
      const reads = queued.readsFrom(queued.start.expectedStart());
      const at = Math.min(Math.max(reads.readAt, notBefore), deadline ?? Number.POSITIVE_INFINITY);
      readNext(now, Math.max(now, at), reads.spareAt, reads.thenAt);
    }
    // Waiting for what the probe learns, the read may come at any moment: once.
    expectedReads?.expect(learned ? now : readAt, learned ? undefined : interval);
    const spareAt = spare[0];
    const moved = queued ? (stop: AbortSignal) => queued!.start.moved(stop) : undefined;
    const arrived = await pause(clock, Math.max(0, (spareAt ?? readAt) - now), signal, delivered, learned, moved);
    if (!arrived.ok) return arrived;
    if (arrived.value?.kind === 'delivered') return ok({ result: arrived.value.result, polls });
    if (arrived.value?.kind === 'moved') continue;
    if (arrived.value?.kind === 'learned') {
      // Read when a typical task submitted with this one is done, and as a learned task from then on.
      const reads = arrived.value.reads;
      learned = undefined;
      readNext(clock.now(), Math.max(clock.now(), reads.firstAt), reads.spareAt, reads.thenAt);
      interval = reads.intervalMs;
      rampTo = 0;
      growFrom = Number.NEGATIVE_INFINITY;
      continue;
    }
    if (spareAt !== undefined) {
      spare = spare.slice(1);
      if (!hasSpareRoom?.()) continue;
    }
    const read = await client.task(taskId, signal);
    polls++;
    if (!read.ok) return read;
    const task = read.value;
    if (task.state !== 'running') return ok({ result: task, polls });
    const answeredAt = clock.now();
    const left = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - answeredAt;
    if (left <= 0) return err(stillRunning(task, timeoutMs!));
    const pending = isPending(task.status);
    if (queued && pending) {
      queued.start.seenPending(answeredAt);
      notBefore = answeredAt + interval;
      interval = Math.round(interval * 1.5);
      continue;
    }
    // Not started yet: no read, spare or not, can find it ended before it has run its least time.
    const pendingMs = pending ? schedule.pendingMs : undefined;
    // Seen running for the first time after waiting in the queue: read it as a task that started
    // when it likely did (where the replay places it, else between its last pending read and this one).
    let started: StartedReads | undefined;
    if (queued) {
      queued.start.seenRunning(answeredAt);
      started = queued.readsFrom(queued.start.expectedStart());
      queued = undefined;
    } else if (pendingSince !== undefined) {
      const waitedUntil = pendingSince;
      pendingSince = pending ? answeredAt : undefined;
      if (!pending) started = schedule.fromStart?.(waitedUntil, answeredAt);
    }
    if (started && started.readAt > answeredAt) {
      readNext(answeredAt, Math.min(started.readAt, answeredAt + left), started.spareAt, started.thenAt);
      continue;
    }
    // A spare read that finds the task running leaves the schedule as it was.
    if (spareAt !== undefined && pendingMs === undefined) continue;
    // The first read found it running: the next at the top of its model's spread, if still to come.
    if (thenAt !== undefined && pendingMs === undefined) {
      const top = thenAt;
      thenAt = undefined;
      if (top > answeredAt) {
        readAt = Math.min(top, answeredAt + left);
        spare = sparesBefore(spares, answeredAt, readAt);
        continue;
      }
    }
    let delay = Math.min(interval, schedule.maxIntervalMs, left);
    if (pendingMs !== undefined) delay = Math.max(delay, Math.min(pendingMs, left));
    if (interval < rampTo) interval = Math.min(Math.round(interval * PROBE_GROWTH), rampTo);
    else if (answeredAt >= growFrom) interval = Math.round(interval * 1.5);
    if (delivered) delay = Math.max(delay, Math.min(schedule.maxIntervalMs, left));
    readAt = answeredAt + delay;
    spare = pendingMs === undefined ? sparesBefore(spares, answeredAt, readAt) : [];
  }
}

/** The spare reads still to come before the schedule's next read. */
function sparesBefore(spareAt: readonly number[] | undefined, now: number, readAt: number): number[] {
  return spareAt ? spareAt.filter((at) => at > now && at < readAt) : [];
}

type Interruption =
  | { kind: 'delivered'; result: TaskResult }
  | { kind: 'learned'; reads: LearnedReads }
  | { kind: 'moved' };

/**
 * Sleeps `ms`, or less if the delivery, the learned time or a move of a queued task's expected
 * start comes first (then answers it); a stop is an `aborted` failure.
 */
async function pause(
  clock: Clock,
  ms: number,
  signal: AbortSignal | undefined,
  delivered: Promise<TaskResult> | undefined,
  learned: Promise<LearnedReads> | undefined,
  moved?: (stop: AbortSignal) => Promise<void>,
): Promise<Result<Interruption | undefined, GatewayFailure>> {
  if (signal?.aborted) return err(abortedFailure(false));
  // The sleep is cancelled when something else wins, so that no timer is left on the clock.
  const cancel = new LinkedAbort(signal);
  const slept = sleep(clock, ms, cancel.signal).then(
    () => ok(undefined),
    () => err(abortedFailure(false)),
  );
  if (!delivered && !learned && !moved) return slept.finally(() => cancel.release());
  const racers: Array<Promise<Result<Interruption | undefined, GatewayFailure>>> = [slept];
  if (delivered) racers.push(delivered.then((result) => ok({ kind: 'delivered' as const, result })));
  if (learned) racers.push(learned.then((reads) => ok({ kind: 'learned' as const, reads })));
  if (moved) racers.push(moved(cancel.signal).then(() => ok({ kind: 'moved' as const })));
  const winner = await Promise.race(racers);
  cancel.release();
  cancel.abort();
  return winner;
}

function stillRunning(task: TaskResult, timeoutMs: number): GatewayFailure {
  const message = `task ${task.taskId} is still ${task.status} after ${formatDuration(timeoutMs)}`;
  return { reason: 'timeout', phase: 'body', message, retryable: false, outcomeUnknown: false };
}
