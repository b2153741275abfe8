/*
 * The first guesses, before a run has measured anything, are each action's own:
 * src/actions/durations.ts gathers them. What a run learns is kept here.
 */

/** What was learned of one model's task durations, per unit of work: kept across runs and processes. */
export interface LearnedDuration {
  mean: number;
  variance: number;
  samples: number;
}

/**
 * Where learned durations outlive a run, per gateway and model: a file under $PIPELINE_HOME, or
 * Redis, shared by every process on the gateway.
 */
export interface DurationStore {
  /** What earlier runs learned, by model slug. */
  load(): Promise<Record<string, LearnedDuration>>;
  /** Told each model's new figures as the run learns them. */
  record(slug: string, learned: LearnedDuration): void;
  /** Writes what is still pending; called once at the end of the run. */
  flush(): Promise<void>;
}

/** A figure read back from a store is used only when it is plausible. */
export function isLearnedDuration(value: unknown): value is LearnedDuration {
  if (typeof value !== 'object' || value === null) return false;
  const { mean, variance, samples } = value as Record<string, unknown>;
  return (
    typeof mean === 'number' &&
    mean > 0 &&
    typeof variance === 'number' &&
    variance >= 0 &&
    typeof samples === 'number' &&
    samples >= 1
  );
}
