import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const runner = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));
const report = fileURLToPath(new URL('../../bench/results/latest.json', import.meta.url));
const SCENARIOS = ['batch-images', 'mixed-chain', 'long-video', 'webhook', 'engine-overhead', 'plan-10k', 'shared-key'];

describe('npm run bench -- --quick --json', () => {
  it('prints a line per scenario and writes a well-formed report', { timeout: 240_000 }, async () => {
    const result = await execa('node', [runner, '--quick', '--json'], { reject: false });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    for (const name of SCENARIOS) expect(lines.some((line) => line.startsWith(`${name}: `)), name).toBe(true);
    const written = JSON.parse(await readFile(report, 'utf8'));
    expect(written).toMatchObject({ quick: true, machine: { node: process.version, cpus: expect.any(Number), memory_gb: expect.any(Number) } });
    expect(Object.keys(written.scenarios)).toEqual(SCENARIOS);
    const numbers = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
    const { scenarios } = written;
    for (const name of ['batch-images', 'mixed-chain']) {
      expect(numbers(scenarios[name].makespan_ms) && numbers(scenarios[name].lower_bound_ms) && numbers(scenarios[name].requests_per_task), name).toBe(true);
      expect(scenarios[name].rate_limited).toBeLessThanOrEqual(1);
      expect(numbers(scenarios[name].baseline.makespan_ms)).toBe(true);
    }
    expect(scenarios['long-video'].polls_per_task).toBeGreaterThan(0);
    expect(scenarios.webhook.webhooks_delivered).toBe(scenarios.webhook.tasks);
    expect(numbers(scenarios['engine-overhead'].cpu_ms_per_task) && numbers(scenarios['engine-overhead'].peak_rss_mb)).toBe(true);
    expect(numbers(scenarios['plan-10k'].validate_ms)).toBe(true);
    if (!scenarios['shared-key'].skipped) {
      expect(numbers(scenarios['shared-key'].redis.makespan_ms) && numbers(scenarios['shared-key'].without_redis.makespan_ms)).toBe(true);
      expect(scenarios['shared-key'].redis.rate_limited).toBeLessThanOrEqual(1);
    }
  });
});
