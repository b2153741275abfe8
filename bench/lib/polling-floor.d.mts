/** The least makespan, in ms, of any client that learns of a task's end only by reading it (see polling-floor.mjs). */
export function pollingFloorMs(run: {
  tasks: Array<{ ms: number; meanMs: number }>;
  jitter: number;
  places: number;
  ratePerS: number;
  otherRequests?: number;
}): number;
