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
export const kindOf = (step: { action: string; model?: { type: string } }) => (step.action === 'model' ? (step.model?.type ?? 'model') : step.action);
