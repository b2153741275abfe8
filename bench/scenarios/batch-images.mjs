// batch-images: 120 text-to-image tasks of about 2 s against 30 requests per 6 s and 8 tasks at once.
import { baselineBatch } from '../lib/baseline.mjs';
import { fixed, limitFlags, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

const SLUG = 'vendor-a/vendor-a-v3-t2i';
/** 1 image at 1k takes 3.5 s at latency scale 1: this scale makes it 2 s. */
export const GATEWAY_FLAGS = limitFlags(2 / 3.5);
export const RATE_PER_S = 30 / 6;
export const CONCURRENCY = 8;
export const PROCESSING_MS = 2000;

export function batchRecipe(count) {
  const prompts = Array.from({ length: count }, (_, i) => `"product shot number ${i}"`).join(', ');
  return `version: 1\nname: batch-images\nsettings: { concurrency: ${CONCURRENCY} }\nsteps:\n  image:\n    uses: ${SLUG}\n    for_each: [${prompts}]\n    with: { prompt: "\${{ item }}", aspect_ratio: "1:1" }\n`;
}

/** max(requests ÷ rate, ⌈tasks ÷ concurrency⌉ × processing), with one submission and one poll per task. */
export function lowerBoundMs(tasks, requests = 2 * tasks) {
  return Math.max((requests / RATE_PER_S) * 1000, Math.ceil(tasks / CONCURRENCY) * PROCESSING_MS);
}

export function apiRequests(stats) {
  return (
    (stats.requests.by_route['POST /api/v1/{provider}/{model_id}'] ?? 0) +
    (stats.requests.by_route['GET /api/v1/tasks/{task_id}'] ?? 0)
  );
}

export async function runBaseline(tasks) {
  const gateway = await startGateway(GATEWAY_FLAGS);
  const inputs = Array.from({ length: tasks }, (_, i) => ({ prompt: `product shot number ${i}`, aspect_ratio: '1:1' }));
  const { makespanMs } = await baselineBatch(gateway, SLUG, inputs, CONCURRENCY);
  const stats = await gateway.stats();
  await gateway.stop();
  return {
    makespan_ms: Math.round(makespanMs),
    requests_per_task: apiRequests(stats) / tasks,
    rate_limited: stats.rate_limited,
  };
}

export async function run({ quick }) {
  const tasks = quick ? 12 : 120;
  const gateway = await startGateway(GATEWAY_FLAGS);
  const ours = await runPipeline(gateway, batchRecipe(tasks));
  const stats = await gateway.stats();
  await gateway.stop();
  const baseline = await runBaseline(tasks);
  const bound = lowerBoundMs(tasks);
  const figures = {
    tasks,
    makespan_ms: ours.makespanMs,
    lower_bound_ms: bound,
    makespan_over_bound: ratio(ours.makespanMs, bound),
    requests_per_task: apiRequests(stats) / tasks,
    rate_limited: stats.rate_limited,
    baseline,
    makespan_vs_baseline: ratio(ours.makespanMs, baseline.makespan_ms),
  };
  return {
    line: `batch-images: ${tasks} tasks in ${seconds(ours.makespanMs)} (bound ${seconds(bound)}, ×${fixed(figures.makespan_over_bound)}), ${fixed(figures.requests_per_task)} requests/task, ${stats.rate_limited} 429s | baseline ${seconds(baseline.makespan_ms)}, ${fixed(baseline.requests_per_task)} requests/task, ${baseline.rate_limited} 429s | makespan ×${fixed(figures.makespan_vs_baseline)} of baseline`,
    figures,
  };
}
