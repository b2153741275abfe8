// batch-100k: a --batch file of 10,000 and then 100,000 rows, one text-to-image task each, on a gateway with no
// processing time and a rate limit that never binds: the engine's own cost per task, and how it grows with the batch.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixed, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

const RECIPE = `version: 1
name: batch-100k
inputs:
  prompt: { type: string }
settings: { concurrency: 128 }
steps:
  tile:
    uses: vendor-a/vendor-a-v3-t2i
    with: { prompt: "\${{ inputs.prompt }}", aspect_ratio: "1:1" }
`;

const GATEWAY = ['--rpm', '1000000000', '--max-concurrent', '1000000', '--latency-scale', '0'];

async function side(rows) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-batch-'));
  const batch = join(dir, 'rows.csv');
  await writeFile(batch, `prompt\n${Array.from({ length: rows }, (_, i) => `tile ${i}`).join('\n')}\n`);
  // A fresh gateway for each side: the local gateway keeps its tasks, and the larger side must not pay for the smaller.
  const gateway = await startGateway([...GATEWAY, '--result-ttl', '86400', '--balance', '10000000']);
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
    `${s.rows.toLocaleString('en')} rows in ${seconds(s.makespan_ms)}: ${fixed(s.cpu_ms_per_task, 3)} ms CPU per task, peak RSS ${s.peak_rss_mb} MB, ${Math.round(s.events_per_s)} journal events/s`;
  return {
    line: `batch-100k: ${shown(sides[0])} | ${shown(sides[1])} (targets at 100,000: 0.3 ms, 150 MB)`,
    figures: { sides, targets: { cpu_ms_per_task: 0.3, peak_rss_mb: 150 } },
  };
}
