import { runPlan } from '../../src/engine/engine.js';
import type { LocalGateway } from '../../src/local-gateway/index.js';
import type { engineFor } from './engine.js';
import type { ManualClock } from './manual-clock.js';
import { requestsInFlight, runSkippingTime } from './time-skipping.js';

/**
 * Runs the engine's plan on the manual clock it shares with the gateway, moving time on whenever
 * neither side has a request in flight and no real I/O is pending.
 */
type Engine = Awaited<ReturnType<typeof engineFor>>;

export function runPlanSkippingTime(engine: Engine, gateway: LocalGateway, clock: ManualClock) {
  return runSkippingTime(clock, runPlan(engine.ctx), { busy: requestsInFlight({ budget: engine.budget, gateway }) });
}
