/**
 * The gateway's places for this run's tasks, replayed to foresee when a queued task starts.
 *
 * The gateway runs at most so many of a key's tasks at once and queues the rest, starting them first
 * come, first served, as places free (what `queue_ahead` relies on). So a queued task starts the
 * moment the place it waits for frees: the replay walks the run's tasks in the order the gateway
 * took them, each starting in the place that frees first, each ending when it was seen to end (the
 * gateway's own figures) or, not seen ended yet, when its expected time has passed, and no earlier
 * than now (it may be running still). A read that finds a task pending or running bounds its start.
 *
 * Read from its submission with the run's mean wait in the queue, a queued task was read 1.9 times
 * where one that started at once was read 1.05 times, and seen 1.3 s to 1.9 s after its end, in
 * place of 0.4 s (bench chain-items polled, `queue_ahead: 8`, by hand): the wait varies with the
 * tasks ahead of it, a 1 s image waiting behind eight 10 s videos or behind eight images.
 *
 * It assumes the run's `concurrency` is the key's number of places and that no other process uses
 * them; where either is wrong, the reads that find a task pending or running still bound its start,
 * and the poller backs off between pending reads.
 */
export class GatewayPlaces {
  /** This run's tasks at the gateway, in the order it took them; ended ones leave from the front. */
  private readonly tasks: PlacedTask[] = [];
  /** When each place frees after the tasks that have left the list. */
  private readonly freeAt: number[];
  /** Told when an expected start may have moved. */
  private readonly listeners = new Set<() => void>();

  constructor(
    /** How many of the key's tasks the gateway runs at once (the run's `concurrency`). */
    places: number,
    private readonly now: () => number,
  ) {
    this.freeAt = Array.from({ length: Math.max(1, places) }, () => Number.NEGATIVE_INFINITY);
  }

  /**
   * A task the gateway answered at `answeredAt`: running (it started then) or queued. `expectedMs`:
   * how long it is expected to run once started.
   */
  add(answeredAt: number, queued: boolean, expectedMs: number): PlacedTask {
    const task = new PlacedTask(this, answeredAt, queued, expectedMs);
    this.tasks.push(task);
    return task;
  }

  /**
   * When `task` is expected to start, by the replay of every task the gateway took before it. A
   * task not seen ended holds its place until now at least; for a task already seen running, until
   * the last moment it was seen waiting (it started after, and its place was held until then).
   */
  expectedStart(task: PlacedTask): number {
    if (task.startedAt !== undefined) return task.startedAt;
    const heldUntil = task.seenStarted ? task.waitedUntil : this.now();
    const freeAt = [...this.freeAt];
    for (const placed of this.tasks) {
      const place = earliest(freeAt);
      const start = placed.startedAt ?? placed.bound(Math.max(placed.answeredAt, freeAt[place]!));
      if (placed === task) return start;
      freeAt[place] = placed.endedAt ?? Math.max(start + placed.expectedMs, heldUntil);
    }
    return task.bound(Math.max(task.answeredAt, heldUntil));
  }

  /** Resolves the next time an expected start may have moved; `signal` stops listening. */
  moved(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const once = () => {
        this.listeners.delete(once);
        signal.removeEventListener('abort', once);
        resolve();
      };
      this.listeners.add(once);
      signal.addEventListener('abort', once);
    });
  }

  /** Something known of a task changed: ended ones leave from the front, and the waiting re-plan. */
  changed(): void {
    while (this.tasks[0]?.endedAt !== undefined) {
      const ended = this.tasks.shift()!;
      this.freeAt[earliest(this.freeAt)] = ended.endedAt!;
    }
    for (const listener of [...this.listeners]) listener();
  }
}

/** One task's place at the gateway, as far as this run knows it. */
export class PlacedTask {
  /** When it ended, once seen (or given up on). */
  private end: number | undefined;
  /** The last time a read found it still waiting (else its answer): it started after. */
  private pendingAt: number;
  /** The first time a read found it running: it started before. */
  private runningAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly places: GatewayPlaces,
    readonly answeredAt: number,
    private readonly queued: boolean,
    readonly expectedMs: number,
  ) {
    this.pendingAt = answeredAt;
  }

  /** When it started, where known: answered running, it started then. */
  get startedAt(): number | undefined {
    return this.queued ? undefined : this.answeredAt;
  }

  get endedAt(): number | undefined {
    return this.end;
  }

  /** A read has found it running (or ended). */
  get seenStarted(): boolean {
    return this.runningAt !== Number.POSITIVE_INFINITY;
  }

  /** The last moment it was known to wait. */
  get waitedUntil(): number {
    return this.pendingAt;
  }

  /** `start` kept within what the reads have shown. */
  bound(start: number): number {
    return Math.min(Math.max(start, this.pendingAt), this.runningAt);
  }

  /** When it is expected to start, now (see GatewayPlaces.expectedStart). */
  expectedStart(): number {
    return this.places.expectedStart(this);
  }

  /** Resolves the next time its expected start may have moved; `signal` stops listening. */
  moved(signal: AbortSignal): Promise<void> {
    return this.places.moved(signal);
  }

  seenPending(at: number): void {
    this.pendingAt = Math.max(this.pendingAt, at);
    this.places.changed();
  }

  seenRunning(at: number): void {
    this.runningAt = Math.min(this.runningAt, at);
    this.places.changed();
  }

  /** It was seen to have ended at `endedAt`. */
  ended(endedAt: number): void {
    this.end = endedAt;
    this.places.changed();
  }

  /**
   * It is no longer read (a stop, a failed read, a timeout) but the gateway, told nothing, runs it
   * still: its place is held until its expected end.
   */
  abandoned(): void {
    this.ended(Math.max(this.places.expectedStart(this) + this.expectedMs, this.pendingAt));
  }
}

function earliest(freeAt: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < freeAt.length; i++) if (freeAt[i]! < freeAt[best]!) best = i;
  return best;
}
