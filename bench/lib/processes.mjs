// Helpers shared by the scenarios: a gateway process, a `pipeline run` process, and figures.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

export const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const assets = fileURLToPath(new URL('../../recipes/assets/', import.meta.url));

/** `pipeline gateway serve` on a free port with these flags; answers its URLs, stats() and stop(). */
export async function startGateway(flags) {
  const child = execa('node', [cli, 'gateway', 'serve', '--port', '0', '--no-ffmpeg', '--seed', '1', ...flags], {
    reject: false,
  });
  const line = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(chunk.toString().split('\n')[0]));
    child.once('exit', () => reject(new Error(`the gateway did not start: ${child.stderr}`)));
  });
  const urls = JSON.parse(line);
  return {
    ...urls,
    async stats() {
      return (await fetch(`${urls.schema_url}/__emulator/stats`)).json();
    },
    async stop() {
      child.kill('SIGTERM');
      await child;
    },
  };
}

/**
 * Runs `pipeline run` against a gateway as a whole process; answers its report, journal times and process figures.
 * The step cache is off unless `useCache` (only the rebuild scenario measures the cache): a scenario that times the
 * scheduler must send every task, and a task served from the cache fails it loudly.
 */
export async function runPipeline(gateway, recipeText, args = [], extraEnv = {}, { useCache = false } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-run-'));
  const recipe = join(dir, 'recipe.yaml');
  await writeFile(recipe, recipeText);
  const usageFile = join(dir, 'usage.json');
  const started = performance.now();
  const cacheArgs = useCache ? [] : ['--no-cache'];
  const result = await execa('node', [cli, 'run', recipe, '--json', ...cacheArgs, ...args], {
    reject: false,
    env: {
      PIPELINE_HOME: join(dir, 'home'),
      PIPELINE_BASE_URL: gateway.base_url,
      PIPELINE_API_KEY: gateway.api_key,
      PIPELINE_USAGE_FILE: usageFile,
      CI: 'true',
      ...extraEnv,
    },
  });
  const wallMs = performance.now() - started;
  if (result.exitCode !== 0) throw new Error(`the run failed: ${result.stderr.slice(-2000)}`);
  const usage = JSON.parse(await readFile(usageFile, 'utf8'));
  const report = JSON.parse(result.stdout);
  const journal = (await readFile(join(report.run_dir, 'journal.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const makespanMs = journal.at(-1).t - journal[0].t;
  const cached = journal.filter((event) => event.type === 'item-cached').length;
  if (!useCache && cached > 0) throw new Error(`${cached} items were served from the step cache, which is off`);
  await rm(dir, { recursive: true, force: true });
  return {
    report,
    journal,
    makespanMs,
    wallMs,
    cpuMs: usage.user_ms + usage.system_ms,
    peakRssMb: usage.max_rss_kb / 1024,
  };
}

export const ratio = (a, b) => (b > 0 ? a / b : Number.NaN);
export const fixed = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
export const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`;

/** The gateway limits every batch scenario shares: 30 requests per 6 s, 8 tasks at once, fixed times at `latencyScale`. */
export const limitFlags = (latencyScale) => [
  '--rpm',
  '30',
  '--window-seconds',
  '6',
  '--max-concurrent',
  '8',
  '--latency-jitter',
  '0',
  '--latency-scale',
  String(latencyScale),
];
