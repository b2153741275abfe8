// long-video: 20 video-to-video tasks of about 30 s each: how many polls a task costs.
import { baselineBatch, baselineUpload } from '../lib/baseline.mjs';
import { assets, fixed, limitFlags, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

const SLUG = 'vendor-b/vendor-b-2.0-mini-v2v';
/** 4 s of 720p takes 20 + 4 × 3 = 32 s at scale 1; the quick run makes each task 3 s. */
const flags = (processingS) => limitFlags(processingS / 32);

const recipe = (count) => `version: 1
name: long-video
settings: { concurrency: 8 }
steps:
  clip:
    uses: ${SLUG}
    for_each: [${Array.from({ length: count }, (_, i) => i).join(', ')}]
    with: { video_urls: [${assets}ride.mp4], prompt: "take \${{ item }}", duration: 4, resolution: 720p }
`;

export async function run({ quick }) {
  const tasks = quick ? 2 : 20;
  const processingS = quick ? 3 : 30;
  const gateway = await startGateway(flags(processingS));
  const ours = await runPipeline(gateway, recipe(tasks));
  const stats = await gateway.stats();
  await gateway.stop();
  const polls = (stats.requests.by_route['GET /api/v1/tasks/{task_id}'] ?? 0) / tasks;

  const base = await startGateway(flags(processingS));
  const video = await baselineUpload(base, `${assets}ride.mp4`, 'ride.mp4');
  const inputs = Array.from({ length: tasks }, (_, i) => ({
    video_urls: [video],
    prompt: `take ${i}`,
    duration: 4,
    resolution: '720p',
  }));
  const baseline = await baselineBatch(base, SLUG, inputs, 8);
  const baseStats = await base.stats();
  await base.stop();
  const basePolls = (baseStats.requests.by_route['GET /api/v1/tasks/{task_id}'] ?? 0) / tasks;
  const figures = {
    tasks,
    processing_ms: processingS * 1000,
    makespan_ms: ours.makespanMs,
    lower_bound_ms: Math.ceil(tasks / 8) * processingS * 1000,
    polls_per_task: polls,
    rate_limited: stats.rate_limited,
    baseline: {
      makespan_ms: Math.round(baseline.makespanMs),
      polls_per_task: basePolls,
      rate_limited: baseStats.rate_limited,
    },
    polls_vs_baseline: ratio(polls, basePolls),
  };
  return {
    line: `long-video: ${tasks} tasks of ${processingS}s in ${seconds(ours.makespanMs)} (bound ${seconds(figures.lower_bound_ms)}), ${fixed(polls)} polls/task, ${stats.rate_limited} 429s | baseline ${seconds(baseline.makespanMs)}, ${fixed(basePolls)} polls/task, ${baseStats.rate_limited} 429s | polls ×${fixed(figures.polls_vs_baseline)} of baseline`,
    figures,
  };
}
