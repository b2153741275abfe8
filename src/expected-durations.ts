/**
 * First guesses of how long one run of each kind of step takes, in milliseconds, before the run
 * has measured anything. The planner's wall-time bound and the poller's first poll both start here.
 */
export const EXPECTED_MS: Record<string, number> = {
  'text-to-image': 5_000,
  'image-to-image': 10_000,
  'text-to-video': 40_000,
  'image-to-video': 40_000,
  'video-to-video': 40_000,
  'web-search': 1_000,
  'web-fetch': 2_000,
  llm: 3_000,
  upload: 1_000,
  run: 1_000,
};

export const expectedMs = (kind: string) => EXPECTED_MS[kind] ?? 30_000;

/** The kind a step's time is expected by: a model's type, else its action. */
export const kindOf = (step: { action: string; model?: { type: string } }) =>
  step.action === 'model' ? (step.model?.type ?? 'model') : step.action;

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
