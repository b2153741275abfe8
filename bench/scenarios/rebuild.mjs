// rebuild: the ci-assets recipe run cold, then warm, then with one palette item changed, sharing
// one step cache folder as a CI job would (actions/cache restores it): wall time and requests of each.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assets, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

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
const COLOURS = [
  'forest green',
  'sand',
  'signal orange',
  'teal',
  'plum',
  'slate',
  'coral',
  'mustard',
  'navy',
  'rose',
  'olive',
  'ivory',
];

export async function run({ quick }) {
  const palette = COLOURS.slice(0, quick ? 3 : 12);
  const source = await readFile(fileURLToPath(new URL('../../recipes/ci-assets.yaml', import.meta.url)), 'utf8');
  const recipe = source.replaceAll('./assets/', assets);
  const dir = await mkdtemp(join(tmpdir(), 'bench-rebuild-'));
  const env = { PIPELINE_CACHE_DIR: join(dir, 'cache') };
  const gateway = await startGateway(['--latency-jitter', '0', '--latency-scale', String(quick ? 0.05 : 0.3)]);
  const phases = {};
  const changed = [...palette.slice(0, -1), 'electric blue'];
  for (const [name, colours] of [
    ['cold', palette],
    ['warm', palette],
    ['one_changed', changed],
  ]) {
    const before = await gateway.stats();
    const ours = await runPipeline(gateway, recipe, ['--set', `palette=${JSON.stringify(colours)}`], env, {
      useCache: true,
    });
    const after = await gateway.stats();
    phases[name] = {
      wall_ms: Math.round(ours.wallMs),
      requests: apiRequests(after) - apiRequests(before),
      tasks: tasksOf(after) - tasksOf(before),
      cache_hits: ours.report.cache.hits,
    };
  }
  await gateway.stop();
  await rm(dir, { recursive: true, force: true });
  const figures = { items: palette.length, ...phases };
  const show = (name) =>
    `${seconds(phases[name].wall_ms)}, ${phases[name].requests} requests, ${phases[name].tasks} tasks`;
  const phasesText = `cold ${show('cold')} | warm ${show('warm')} | one item changed ${show('one_changed')}`;
  return {
    line: `rebuild: ${palette.length} backgrounds + icon | ${phasesText}`,
    figures,
  };
}
