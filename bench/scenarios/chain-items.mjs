// chain-items: 200 items through text-to-image → edit → video-to-video, each item's chain on its own
// (settings.item_flow, the default), side by side with the step barrier (item_flow: false) on the
// same gateway settings and seed, with jittered latencies. Each pair runs twice: with webhook
// delivery, where a task's end is known at once, so the figure is the scheduling alone; and polled,
// where each task also holds its slot until a poll sees it ended (the detection lag is printed, and
// the polling floor: the least makespan any polling client could reach, above the bound).
// Then item flow polled once more with settings.queue_ahead, tasks waiting in the gateway's queue.
import { assets, fixed, limitFlags, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';
import { pollingFloorMs } from '../lib/polling-floor.mjs';
import { apiRequests, CONCURRENCY, RATE_PER_S } from './batch-images.mjs';

/** A 1k image takes 1 s at this scale (3.5 s at scale 1); the quick run is six times faster. */
const scaleOf = (quick) => 1 / 3.5 / (quick ? 6 : 1);
/** ±30 % around each task's processing time: items end out of order, as on a real gateway. */
const JITTER = '0.3';

const STEPS = ['t2i', 'edit', 'v2v'];

/** Tasks submitted beyond the 8 the gateway runs, on the side that keeps some in its queue. */
export const QUEUE_AHEAD = 4;

export function chainRecipe(count, itemFlow, queueAhead = 0) {
  const colours = Array.from({ length: count }, (_, i) => `"colour number ${i}"`).join(', ');
  return `version: 1
name: chain-items
settings: { concurrency: ${CONCURRENCY}${itemFlow ? '' : ', item_flow: false'}${queueAhead ? `, queue_ahead: ${queueAhead}` : ''} }
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

/**
 * The polling floor of one run (bench/lib/polling-floor.mjs): the least makespan of any client that
 * learns of a task's end only by reading it, each task's window centred on its step's mean time.
 */
function chainPollingFloorMs(journal) {
  const finished = journal.filter((event) => event.type === 'task-finished' && STEPS.includes(event.step));
  const meanOf = new Map(
    STEPS.map((step) => {
      const times = finished.filter((event) => event.step === step).map((event) => event.duration_ms ?? 0);
      return [step, times.reduce((sum, ms) => sum + ms, 0) / Math.max(1, times.length)];
    }),
  );
  const tasks = finished.map((event) => ({ ms: event.duration_ms ?? 0, meanMs: meanOf.get(event.step) }));
  return pollingFloorMs({ tasks, jitter: Number(JITTER), places: CONCURRENCY, ratePerS: RATE_PER_S, otherRequests: 1 });
}

/**
 * The mean time from a task's end to the moment the run knew it (its slot held for nothing). A task
 * starts when it is submitted, or, where more than the gateway's 8 are in flight, when the gateway
 * takes it from its queue, first come first served: the end of one of the 8 before it.
 */
function detectionLagMs(journal) {
  const submitted = new Map();
  const tasks = [];
  for (const event of journal) {
    const item = `${event.step}[${event.index}]`;
    if (event.type === 'task-submitted') submitted.set(item, event.t);
    if (event.type !== 'task-finished' || !submitted.has(item)) continue;
    tasks.push({ submittedAt: submitted.get(item), seenAt: event.t, ms: event.duration_ms ?? 0 });
  }
  tasks.sort((a, b) => a.submittedAt - b.submittedAt);
  const placeFreeAt = Array(CONCURRENCY).fill(Number.NEGATIVE_INFINITY);
  let lag = 0;
  for (const task of tasks) {
    const place = placeFreeAt.indexOf(Math.min(...placeFreeAt));
    const end = Math.max(task.submittedAt, placeFreeAt[place]) + task.ms;
    placeFreeAt[place] = end;
    lag += task.seenAt - end;
  }
  return tasks.length > 0 ? lag / tasks.length : 0;
}

async function side(count, quick, itemFlow, webhook, queueAhead = 0) {
  // Jittered times; the rest as batch-images: 30 requests per 6 s, 8 tasks at once.
  const flags = limitFlags(scaleOf(quick)).map((flag, i, all) => (all[i - 1] === '--latency-jitter' ? JITTER : flag));
  const gateway = await startGateway(flags);
  const run = await runPipeline(
    gateway,
    chainRecipe(count, itemFlow, queueAhead),
    webhook ? ['--webhook-listen', '127.0.0.1:0'] : [],
  );
  const stats = await gateway.stats();
  await gateway.stop();
  const bound = chainBoundMs(run.journal, { webhook });
  // Polled with no task waiting at the gateway, no client can reach the bound: its floor is higher.
  const floor = !webhook && !queueAhead ? chainPollingFloorMs(run.journal) : undefined;
  return {
    makespan_ms: run.makespanMs,
    lower_bound_ms: Math.round(bound),
    makespan_over_bound: ratio(run.makespanMs, bound),
    ...(floor === undefined
      ? {}
      : { polling_floor_ms: Math.round(floor), makespan_over_polling_floor: ratio(run.makespanMs, floor) }),
    requests_per_task: apiRequests(stats) / (3 * count),
    detection_lag_ms: Math.round(detectionLagMs(run.journal)),
    rate_limited: stats.rate_limited,
  };
}

const floorPart = (side) =>
  side.polling_floor_ms === undefined
    ? ''
    : `; polling floor ${seconds(side.polling_floor_ms)}, ×${fixed(side.makespan_over_polling_floor)}`;
const sideLine = (label, side) =>
  `${label} ${seconds(side.makespan_ms)} (bound ${seconds(side.lower_bound_ms)}, ×${fixed(side.makespan_over_bound)}${floorPart(side)}), ${fixed(side.requests_per_task)} requests/task, lag ${side.detection_lag_ms} ms, ${side.rate_limited} 429s`;

export async function run({ quick }) {
  const items = quick ? 20 : 200;
  const flowing = await side(items, quick, true, true);
  const barrier = await side(items, quick, false, true);
  const polled = await side(items, quick, true, false);
  const polledBarrier = await side(items, quick, false, false);
  const queued = await side(items, quick, true, false, QUEUE_AHEAD);
  const figures = {
    items,
    tasks: 3 * items,
    ...flowing,
    barrier,
    makespan_vs_barrier: ratio(flowing.makespan_ms, barrier.makespan_ms),
    polled,
    polled_barrier: polledBarrier,
    polled_vs_barrier: ratio(polled.makespan_ms, polledBarrier.makespan_ms),
    queue_ahead: QUEUE_AHEAD,
    polled_queue_ahead: queued,
  };
  return {
    line: [
      `chain-items: ${items} items × 3 steps, webhooks: ${sideLine('item flow', flowing)}`,
      `${sideLine('item_flow: false', barrier)} | ×${fixed(figures.makespan_vs_barrier)} of the barrier`,
      `polled: ${sideLine('item flow', polled)}`,
      `${sideLine('item_flow: false', polledBarrier)} | ×${fixed(figures.polled_vs_barrier)} of the barrier`,
      `${sideLine(`queue_ahead: ${QUEUE_AHEAD}`, queued)}`,
    ].join('\n  '),
    figures,
  };
}
