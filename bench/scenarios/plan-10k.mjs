// plan-10k: `pipeline validate` and `pipeline plan` of a generated recipe with 10,000 steps, as whole processes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { generateRecipe } from '../lib/generated-recipe.mjs';

export async function run({ quick, cli }) {
  const count = quick ? 1_000 : 10_000;
  const dir = await mkdtemp(join(tmpdir(), 'bench-plan-'));
  const path = join(dir, 'generated.yaml');
  await writeFile(path, generateRecipe(count));
  const time = async (args) => {
    const samples = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      const result = await execa('node', [cli, ...args], { reject: false });
      if (result.exitCode !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr.slice(0, 500)}`);
      samples.push(performance.now() - start);
    }
    samples.sort((a, b) => a - b);
    return samples[2];
  };
  const validateMs = await time(['validate', path]);
  const planMs = await time(['plan', path, '--format', 'json']);
  await rm(dir, { recursive: true, force: true });
  // Issue 22: validate and plan of 10,000 steps each in at most 300 ms, as whole processes.
  const targetMs = 300;
  return {
    line: `plan-10k: ${count} steps: validate ${validateMs.toFixed(0)} ms, plan ${planMs.toFixed(0)} ms (median of 5 whole processes; target ≤ ${targetMs} ms each)`,
    figures: {
      steps: count,
      validate_ms: Math.round(validateMs),
      plan_ms: Math.round(planMs),
      target_ms: targetMs,
      met: validateMs <= targetMs && planMs <= targetMs,
    },
  };
}
