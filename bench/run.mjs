#!/usr/bin/env node
// `npm run bench` runs every scenario against the local gateway on loopback and prints one line of
// figures per scenario. `-- --quick` runs a tenfold smaller version; `-- --json` also writes
// bench/results/latest.json. `-- --only NAME` runs one scenario.
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

const SCENARIOS = ['batch-images', 'mixed-chain', 'long-video', 'webhook', 'engine-overhead', 'plan-10k'];

const results = {};
for (const name of SCENARIOS) {
  if (only && name !== only) continue;
  const scenario = await import(`./scenarios/${name}.mjs`);
  const outcome = await scenario.run({ quick, cli });
  console.log(outcome.line);
  results[name] = outcome.figures;
}

if (json) {
  const report = {
    when: new Date().toISOString(),
    quick,
    machine: { node: process.version, cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', memory_gb: Math.round(totalmem() / 1024 ** 3) },
    scenarios: results,
  };
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}latest.json`, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote bench/results/latest.json`);
}
