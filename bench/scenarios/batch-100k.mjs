// batch-100k: a --batch file of 10,000 and then 100,000 rows, one text-to-image task each, on a gateway with no
// processing time and a rate limit that never binds: the engine's own cost per task, and how it grows with the batch,
// beside what the same tasks cost a bare client with no engine at all.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { fixed, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

const BARE_CLIENT = fileURLToPath(new URL('../lib/bare-client.mjs', import.meta.url));

const CONCURRENCY = 128;

const RECIPE = `version: 1
name: batch-100k
inputs:
  prompt: { type: string }
settings: { concurrency: ${CONCURRENCY} }
steps:
  tile:
    uses: vendor-a/vendor-a-v3-t2i
    with: { prompt: "\${{ inputs.prompt }}", aspect_ratio: "1:1" }
`;

const GATEWAY = ['--rpm', '1000000000', '--max-concurrent', '1000000', '--latency-scale', '0'];

/** A gateway for one side: fresh, since the local gateway keeps its tasks and the larger side must not pay for the smaller. */
function freshGateway() {
  return startGateway([...GATEWAY, '--result-ttl', '86400', '--balance', '10000000']);
}

/** The same tasks done by bench/lib/bare-client.mjs: what the tasks cost without the engine. */
async function bare(rows) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-bare-'));
  const gateway = await freshGateway();
  try {
    const { stdout } = await execa('node', [
      BARE_CLIENT,
      gateway.base_url,
      gateway.api_key,
      String(rows),
      String(CONCURRENCY),
      dir,
    ]);
    const usage = JSON.parse(stdout);
    return { cpu_ms_per_task: usage.cpu_ms / rows, peak_rss_mb: Math.round(usage.max_rss_kb / 1024) };
  } finally {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function side(rows) {
  return { ...(await engineSide(rows)), bare_client: await bare(rows) };
}

async function engineSide(rows) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-batch-'));
  const batch = join(dir, 'rows.csv');
  await writeFile(batch, `prompt\n${Array.from({ length: rows }, (_, i) => `tile ${i}`).join('\n')}\n`);
  const gateway = await freshGateway();
  try {
    const run = await runPipeline(gateway, RECIPE, ['--batch', batch, '--no-report']);
    return {
      rows,
      cpu_ms_per_task: run.cpuMs / rows,
      peak_rss_mb: Math.round(run.peakRssMb),
      events_per_s: run.journal.length / (run.makespanMs / 1000),
      makespan_ms: run.makespanMs,
    };
  } finally {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run({ quick }) {
  const [small, large] = quick ? [1_000, 5_000] : [10_000, 100_000];
  const sides = [await side(small), await side(large)];
  const shown = (s) =>
    `${s.rows.toLocaleString('en')} rows in ${seconds(s.makespan_ms)}: ${fixed(s.cpu_ms_per_task, 3)} ms CPU per task, peak RSS ${s.peak_rss_mb} MB, ${Math.round(s.events_per_s)} journal events/s (bare client: ${fixed(s.bare_client.cpu_ms_per_task, 3)} ms, ${s.bare_client.peak_rss_mb} MB)`;
  return {
    line: `batch-100k: ${shown(sides[0])} | ${shown(sides[1])} (targets at 100,000: 0.3 ms, 150 MB)`,
    figures: { sides, targets: { cpu_ms_per_task: 0.3, peak_rss_mb: 150 } },
  };
}
