// engine-overhead: a 10,000-element for_each on a gateway with no rate limit and no processing time.
import { fixed, runPipeline, seconds, startGateway } from '../lib/processes.mjs';

export async function run({ quick }) {
  const tasks = quick ? 1_000 : 10_000;
  const gateway = await startGateway([
    '--rpm',
    '1000000000',
    '--max-concurrent',
    '1000000',
    '--latency-scale',
    '0',
    '--result-ttl',
    '86400',
    '--balance',
    '1000000',
  ]);
  const recipe = `version: 1
name: engine-overhead
inputs:
  count: { type: integer, default: ${tasks} }
settings: { concurrency: 128 }
steps:
  numbers: { run: ["node", "-e", "console.log(JSON.stringify(Array.from({ length: Number(process.argv[1]) }, (_, i) => 'tile ' + i)))", "\${{ inputs.count }}"] }
  tile:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.numbers.outputs.json }}
    with: { prompt: "\${{ item }}", aspect_ratio: "1:1" }
`;
  // The engine alone: the report's thumbnails (about 10 ms of CPU per image) are report-1k's figure.
  const ours = await runPipeline(gateway, recipe, ['--no-report']);
  await gateway.stop();
  const figures = {
    tasks,
    cpu_ms: Math.round(ours.cpuMs),
    cpu_ms_per_task: ours.cpuMs / tasks,
    peak_rss_mb: Math.round(ours.peakRssMb),
    makespan_ms: ours.makespanMs,
    targets: { cpu_ms_per_task: 1, peak_rss_mb: 300 },
  };
  return {
    line: `engine-overhead: ${tasks} tasks in ${seconds(ours.makespanMs)}: ${fixed(figures.cpu_ms_per_task, 3)} ms CPU per task (whole client process, start-up included), peak RSS ${figures.peak_rss_mb} MB (targets 1 ms, 300 MB)`,
    figures,
  };
}
