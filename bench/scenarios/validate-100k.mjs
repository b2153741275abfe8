// validate-100k: `pipeline validate` and `pipeline plan` of generated recipes of 10,000 and 100,000 steps,
// as whole processes: whether analysis stays linear (ten times the steps in under ten times the time).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { generateRecipe } from '../lib/generated-recipe.mjs';

/** The median wall time and peak RSS of `samples` whole processes of the command. */
async function measure(cli, args, samples) {
  const times = [];
  let peakKb = 0;
  for (let i = 0; i < samples; i++) {
    const usageFile = join(tmpdir(), `bench-validate-usage-${process.pid}-${i}.json`);
    const start = performance.now();
    const result = await execa('node', [cli, ...args], {
      reject: false,
      env: { PIPELINE_USAGE_FILE: usageFile },
    });
    const ms = performance.now() - start;
    if (result.exitCode !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr.slice(0, 500)}`);
    const usage = JSON.parse(await readFile(usageFile, 'utf8'));
    await rm(usageFile, { force: true });
    peakKb = Math.max(peakKb, usage.max_rss_kb);
    times.push(ms);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], peakMb: peakKb / 1024 };
}

export async function run({ quick, cli }) {
  const small = quick ? 1_000 : 10_000;
  const large = quick ? 10_000 : 100_000;
  const dir = await mkdtemp(join(tmpdir(), 'bench-validate-'));
  const figures = {};
  try {
    for (const count of [small, large]) {
      const path = join(dir, `generated-${count}.yaml`);
      await writeFile(path, generateRecipe(count));
      const samples = count === large ? 3 : 5;
      figures[count] = {
        validate: await measure(cli, ['validate', path], samples),
        plan: await measure(cli, ['plan', path, '--format', 'json'], samples),
      };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const ratio = (command) => figures[large][command].ms / figures[small][command].ms;
  const side = (count) =>
    `${count} steps: validate ${figures[count].validate.ms.toFixed(0)} ms, plan ${figures[count].plan.ms.toFixed(0)} ms (peak ${figures[count].plan.peakMb.toFixed(0)} MB)`;
  const met = ratio('validate') < 10 && ratio('plan') < 10;
  return {
    line: `validate-100k: ${side(large)}; ${side(small)}; ×${ratio('validate').toFixed(1)} and ×${ratio('plan').toFixed(1)} for ten times the steps (median of whole processes; target < ×10)`,
    figures: {
      steps: large,
      validate_ms: Math.round(figures[large].validate.ms),
      plan_ms: Math.round(figures[large].plan.ms),
      validate_peak_mb: Math.round(figures[large].validate.peakMb),
      plan_peak_mb: Math.round(figures[large].plan.peakMb),
      small_steps: small,
      small_validate_ms: Math.round(figures[small].validate.ms),
      small_plan_ms: Math.round(figures[small].plan.ms),
      validate_ratio: Number(ratio('validate').toFixed(2)),
      plan_ratio: Number(ratio('plan').toFixed(2)),
      target_ratio: 10,
      met,
    },
  };
}
