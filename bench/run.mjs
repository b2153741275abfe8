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

const SCENARIOS = [
  'batch-images',
  'mixed-chain',
  'chain-items',
  'long-video',
  'webhook',
  'engine-overhead',
  'batch-100k',
  'plan-10k',
  'validate-100k',
  'rebuild',
  'report-1k',
  'shared-key',
  'workers',
];

const results = {};
const chosen = SCENARIOS.filter((name) => !only || name === only);
if (only && chosen.length === 0) throw new Error(`no scenario ${only}; the scenarios are ${SCENARIOS.join(', ')}`);
if (quick) {
  // A smoke run: the scenarios run side by side to stay under a minute; their figures are not the targets'.
  const outcomes = await Promise.all(
    chosen.map(async (name) => (await import(`./scenarios/${name}.mjs`)).run({ quick, cli })),
  );
  for (const [i, name] of chosen.entries()) {
    console.log(outcomes[i].line);
    results[name] = outcomes[i].figures;
  }
} else {
  for (const name of chosen) {
    const outcome = await (await import(`./scenarios/${name}.mjs`)).run({ quick, cli });
    console.log(outcome.line);
    results[name] = outcome.figures;
  }
}

if (json) {
  const report = {
    when: new Date().toISOString(),
    quick,
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gb: Math.round(totalmem() / 1024 ** 3),
    },
    scenarios: results,
  };
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}latest.json`, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote bench/results/latest.json`);
}
