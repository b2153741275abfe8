// webhook: batch-images with results delivered by webhook; requests per task.
import { fixed, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';
import { apiRequests, batchRecipe, GATEWAY_FLAGS, lowerBoundMs, runBaseline } from './batch-images.mjs';

export async function run({ quick }) {
  const tasks = quick ? 12 : 120;
  const gateway = await startGateway(GATEWAY_FLAGS);
  const ours = await runPipeline(gateway, batchRecipe(tasks), ['--webhook-listen', '127.0.0.1:0']);
  const stats = await gateway.stats();
  await gateway.stop();
  const baseline = await runBaseline(tasks);
  // With webhooks a task needs one request: its submission.
  const bound = lowerBoundMs(tasks, tasks);
  const figures = {
    tasks,
    makespan_ms: ours.makespanMs,
    lower_bound_ms: bound,
    makespan_over_bound: ratio(ours.makespanMs, bound),
    requests_per_task: apiRequests(stats) / tasks,
    webhooks_delivered: stats.webhooks.delivered,
    rate_limited: stats.rate_limited,
    baseline,
    requests_vs_baseline: ratio(apiRequests(stats) / tasks, baseline.requests_per_task),
  };
  return {
    line: `webhook: ${tasks} tasks in ${seconds(ours.makespanMs)} (bound ${seconds(bound)}, ×${fixed(figures.makespan_over_bound)}), ${fixed(figures.requests_per_task)} requests/task, ${stats.webhooks.delivered} webhooks, ${stats.rate_limited} 429s | baseline (polling) ${fixed(baseline.requests_per_task)} requests/task | requests ×${fixed(figures.requests_vs_baseline)} of baseline`,
    figures,
  };
}
