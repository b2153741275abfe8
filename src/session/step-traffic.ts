import { AsyncLocalStorage } from 'node:async_hooks';
import type { RateLimitObservation } from '../gateway/rate-limit-headers.js';

/** Gateway answers by the step whose item asked: for the table of the GitHub step summary. */
export class StepTraffic {
  private readonly current = new AsyncLocalStorage<string>();
  readonly byStep = new Map<string, { requests: number; rateLimited: number }>();

  readonly within = <T>(stepKey: string, work: () => Promise<T>): Promise<T> => this.current.run(stepKey, work);

  readonly observe = (observation: RateLimitObservation): void => {
    const step = this.current.getStore();
    if (step === undefined) return;
    const counts = this.byStep.get(step) ?? { requests: 0, rateLimited: 0 };
    counts.requests++;
    if (observation.status === 429) counts.rateLimited++;
    this.byStep.set(step, counts);
  };
}
