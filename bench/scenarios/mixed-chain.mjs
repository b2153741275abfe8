// mixed-chain: 20 batch rows of the launch-kit chain at once, under one budget.
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselineChain } from '../lib/baseline.mjs';
import { assets, fixed, ratio, runPipeline, seconds, startGateway } from '../lib/processes.mjs';
import { CONCURRENCY, GATEWAY_FLAGS, RATE_PER_S } from './batch-images.mjs';

if (GATEWAY_FLAGS.at(-2) !== '--latency-scale')
  throw new Error('Internal error: batch-images flags must end with --latency-scale');

/** The gateway's scale: 2 s for a 1k image as in batch-images; the quick run is six times faster. */
const scaleOf = (quick) => 2 / 3.5 / (quick ? 6 : 1);
/** Processing at a scale: a 2K hero, an edit of two images, 5 s of 720p video. */
const processing = (quick) => ({
  hero: 5500 * scaleOf(quick),
  edit: 9000 * scaleOf(quick),
  video: 35000 * scaleOf(quick),
});
const TOPICS = [
  'solar-powered cargo bikes',
  'balcony tomatoes',
  'night trains',
  'cold brew coffee',
  'golden hour portraits',
];

const API_ROUTES = [
  'POST /api/v1/{provider}/{model_id}',
  'GET /api/v1/tasks/{task_id}',
  'POST /api/v1/media/files',
  'POST /tools/v1/web-search',
  'POST /tools/v1/web-fetch',
  'POST /llm/v1/chat/completions',
];
const apiRequests = (stats) => API_ROUTES.reduce((sum, route) => sum + (stats.requests.by_route[route] ?? 0), 0);
const tasksOf = (stats) => Object.values(stats.tasks.submitted).reduce((a, b) => a + b, 0);

/**
 * Per row: a search, a fetch, a text call, 5 submissions and 5 polls; 2 uploads in all. The bound
 * is the largest of requests ÷ rate, one row's critical path, and all task time ÷ concurrency.
 */
export function lowerBoundMs(rows, quick) {
  const requests = 13 * rows + 2;
  const { hero, edit, video } = processing(quick);
  return Math.max(
    (requests / RATE_PER_S) * 1000,
    hero + edit + video,
    (rows * (3 * hero + edit + video)) / CONCURRENCY,
  );
}

export async function run({ quick }) {
  const rows = quick ? 2 : 20;
  const topics = Array.from({ length: rows }, (_, i) => TOPICS[i % TOPICS.length]);
  const source = await readFile(fileURLToPath(new URL('../../recipes/launch-kit.yaml', import.meta.url)), 'utf8');
  const recipe = source.replaceAll('./assets/', assets).replace('concurrency: 4', `concurrency: ${CONCURRENCY}`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-chain-'));
  const batch = join(dir, 'rows.jsonl');
  await writeFile(batch, topics.map((topic) => JSON.stringify({ topic })).join('\n'));

  const flags = [...GATEWAY_FLAGS.slice(0, -1), String(scaleOf(quick))];
  const gateway = await startGateway(flags);
  const ours = await runPipeline(gateway, recipe, ['--batch', batch]);
  const stats = await gateway.stats();
  await gateway.stop();

  const base = await startGateway(flags);
  const baseline = await baselineChain(base, topics, assets, CONCURRENCY);
  const baseStats = await base.stats();
  await base.stop();
  await rm(dir, { recursive: true, force: true });

  const bound = lowerBoundMs(rows, quick);
  const tasks = tasksOf(stats);
  const figures = {
    rows,
    tasks,
    makespan_ms: ours.makespanMs,
    lower_bound_ms: Math.round(bound),
    makespan_over_bound: ratio(ours.makespanMs, bound),
    requests_per_task: apiRequests(stats) / tasks,
    rate_limited: stats.rate_limited,
    baseline: {
      makespan_ms: Math.round(baseline.makespanMs),
      requests_per_task: apiRequests(baseStats) / tasksOf(baseStats),
      rate_limited: baseStats.rate_limited,
    },
    makespan_vs_baseline: ratio(ours.makespanMs, baseline.makespanMs),
  };
  return {
    line: `mixed-chain: ${rows} rows, ${tasks} tasks in ${seconds(ours.makespanMs)} (bound ${seconds(bound)}, ×${fixed(figures.makespan_over_bound)}), ${fixed(figures.requests_per_task)} requests/task, ${stats.rate_limited} 429s | baseline ${seconds(baseline.makespanMs)}, ${fixed(figures.baseline.requests_per_task)} requests/task, ${baseStats.rate_limited} 429s | makespan ×${fixed(figures.makespan_vs_baseline)} of baseline`,
    figures,
  };
}
