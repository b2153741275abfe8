// chain-items: 200 items through text-to-image → edit → video-to-video, each item's chain on its own
// (settings.item_flow, the default), side by side with the step barrier (item_flow: false) on the
// same gateway settings and seed, with jittered latencies. Each pair runs twice: with webhook
// delivery, where a task's end is known at once, so the figure is the scheduling alone; and polled,
// where each task also holds its slot until a poll sees it ended (the detection lag is printed).
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
 * journal: the largest of requests ÷ rate (a submission per task, a poll per task unless webhooks
 * deliver the results, one upload), the longest item chain (t2i[i] + edit[i] + v2v[i]), and all
 * task time ÷ the tasks in flight.
 */
export function chainBoundMs(journal, { webhook = false } = {}) {
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
  const requests = (webhook ? 1 : 2) * tasks + 1;
  return Math.max((requests / RATE_PER_S) * 1000, Math.max(0, ...byItem.values()), total / CONCURRENCY);
}

/** The mean time from a task's end to the moment the run knew it (its slot held for nothing). */
function detectionLagMs(journal) {
  const submitted = new Map();
  let lag = 0;
  let tasks = 0;
  for (const event of journal) {
    const item = `${event.step}[${event.index}]`;
    if (event.type === 'task-submitted') submitted.set(item, event.t);
    if (event.type !== 'task-finished' || !submitted.has(item)) continue;
    lag += event.t - submitted.get(item) - (event.duration_ms ?? 0);
    tasks++;
  }
  return tasks > 0 ? lag / tasks : 0;
}

async function side(count, quick, itemFlow, webhook) {
  // Jittered times; the rest as batch-images: 30 requests per 6 s, 8 tasks at once.
  const flags = limitFlags(scaleOf(quick)).map((flag, i, all) => (all[i - 1] === '--latency-jitter' ? JITTER : flag));
  const gateway = await startGateway(flags);
  const run = await runPipeline(
    gateway,
    chainRecipe(count, itemFlow),
    webhook ? ['--webhook-listen', '127.0.0.1:0'] : [],
  );
  const stats = await gateway.stats();
  await gateway.stop();
  const bound = chainBoundMs(run.journal, { webhook });
  return {
    makespan_ms: run.makespanMs,
    lower_bound_ms: Math.round(bound),
    makespan_over_bound: ratio(run.makespanMs, bound),
    requests_per_task: apiRequests(stats) / (3 * count),
    detection_lag_ms: Math.round(detectionLagMs(run.journal)),
    rate_limited: stats.rate_limited,
  };
}

const sideLine = (label, side) =>
  `${label} ${seconds(side.makespan_ms)} (bound ${seconds(side.lower_bound_ms)}, ×${fixed(side.makespan_over_bound)}), ${fixed(side.requests_per_task)} requests/task, lag ${side.detection_lag_ms} ms, ${side.rate_limited} 429s`;

export async function run({ quick }) {
  const items = quick ? 20 : 200;
  const flowing = await side(items, quick, true, true);
  const barrier = await side(items, quick, false, true);
  const polled = await side(items, quick, true, false);
  const polledBarrier = await side(items, quick, false, false);
  const figures = {
    items,
    tasks: 3 * items,
    ...flowing,
    barrier,
    makespan_vs_barrier: ratio(flowing.makespan_ms, barrier.makespan_ms),
    polled,
    polled_barrier: polledBarrier,
    polled_vs_barrier: ratio(polled.makespan_ms, polledBarrier.makespan_ms),
  };
  return {
    line: [
      `chain-items: ${items} items × 3 steps, webhooks: ${sideLine('item flow', flowing)}`,
      `${sideLine('item_flow: false', barrier)} | ×${fixed(figures.makespan_vs_barrier)} of the barrier`,
      `polled: ${sideLine('item flow', polled)}`,
      `${sideLine('item_flow: false', polledBarrier)} | ×${fixed(figures.polled_vs_barrier)} of the barrier`,
    ].join('\n  '),
    figures,
  };
}
