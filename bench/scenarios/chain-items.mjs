// chain-items: 200 items through text-to-image → edit → video-to-video, each item's chain on its own
// (settings.item_flow, the default), side by side with the step barrier (item_flow: false) on the
// same gateway settings and seed, with jittered latencies.
import { assets, fixed, limitFlags, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';
import { apiRequests, CONCURRENCY, RATE_PER_S } from './batch-images.mjs';

/** A 1k image takes 1 s at this scale (3.5 s at scale 1); the quick run is six times faster. */
const scaleOf = (quick) => 1 / 3.5 / (quick ? 6 : 1);
/** ±30 % around each task's processing time: items end out of order, as on a real gateway. */
const JITTER = '0.3';

const STEPS = ['t2i', 'edit', 'v2v'];

export function chainRecipe(count, itemFlow) {
  const colours = Array.from({ length: count }, (_, i) => `"colour number ${i}"`).join(', ');
  return `version: 1
name: chain-items
settings: { concurrency: ${CONCURRENCY}${itemFlow ? '' : ', item_flow: false'} }
steps:
  t2i:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [${colours}]
    with: { prompt: "a \${{ item }} background", aspect_ratio: "1:1" }
  edit:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs[*].images[0].url }}
    with: { prompt: Add a small badge in the corner., image: ["\${{ item }}"] }
  v2v:
    uses: vendor-b/vendor-b-2.0-mini-v2v
    for_each: \${{ steps.edit.outputs }}
    with:
      video_urls: [${assets}ride.mp4]
      prompt: Restyle the ride in the look of [Image 1].
      reference_images: ["\${{ item.images[0].url }}"]
      duration: 5
      resolution: 720p
`;
}

/**
 * The DAG-aware lower bound of one run, from the processing times the gateway reported in its
 * journal: the largest of requests ÷ rate (a submission and a poll per task, one upload), the
 * longest item chain (t2i[i] + edit[i] + v2v[i]), and all task time ÷ the tasks in flight.
 */
export function chainBoundMs(journal) {
  const byItem = new Map();
  let total = 0;
  let tasks = 0;
  for (const event of journal) {
    if (event.type !== 'task-finished' || !STEPS.includes(event.step)) continue;
    const ms = event.duration_ms ?? 0;
    byItem.set(event.index, (byItem.get(event.index) ?? 0) + ms);
    total += ms;
    tasks++;
  }
  const requests = 2 * tasks + 1;
  return Math.max((requests / RATE_PER_S) * 1000, Math.max(0, ...byItem.values()), total / CONCURRENCY);
}

async function side(count, quick, itemFlow) {
  // Jittered times; the rest as batch-images: 30 requests per 6 s, 8 tasks at once.
  const flags = limitFlags(scaleOf(quick)).map((flag, i, all) => (all[i - 1] === '--latency-jitter' ? JITTER : flag));
  const gateway = await startGateway(flags);
  const run = await runPipeline(gateway, chainRecipe(count, itemFlow));
  const stats = await gateway.stats();
  await gateway.stop();
  const bound = chainBoundMs(run.journal);
  return {
    makespan_ms: run.makespanMs,
    lower_bound_ms: Math.round(bound),
    makespan_over_bound: ratio(run.makespanMs, bound),
    requests_per_task: apiRequests(stats) / (3 * count),
    rate_limited: stats.rate_limited,
  };
}

export async function run({ quick }) {
  const items = quick ? 20 : 200;
  const flowing = await side(items, quick, true);
  const barrier = await side(items, quick, false);
  const figures = {
    items,
    tasks: 3 * items,
    ...flowing,
    barrier,
    makespan_vs_barrier: ratio(flowing.makespan_ms, barrier.makespan_ms),
  };
  return {
    line: `chain-items: ${items} items × 3 steps in ${seconds(flowing.makespan_ms)} (bound ${seconds(flowing.lower_bound_ms)}, ×${fixed(flowing.makespan_over_bound)}), ${fixed(flowing.requests_per_task)} requests/task, ${flowing.rate_limited} 429s | item_flow: false ${seconds(barrier.makespan_ms)} (bound ${seconds(barrier.lower_bound_ms)}, ×${fixed(barrier.makespan_over_bound)}), ${fixed(barrier.requests_per_task)} requests/task | makespan ×${fixed(figures.makespan_vs_barrier)} of the barrier`,
    figures,
  };
}
