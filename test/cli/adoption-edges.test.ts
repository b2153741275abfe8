import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * The rough edges a new user met adopting the tool in CI (issue 21), each as the command line
 * shows it, against the built-in gateway (`--local`).
 */
const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let home: string;
/** The time of the in-process commands and of the built-in gateway `--local` starts: waits take no real time. */
const clock = new ManualClock();

/** `pipeline …` in this process, through the bin's entry point; the kill and Ctrl-C tests below spawn the bin. */
const pipeline = (args: string[]) =>
  pipelineInProcess(args, { env: { PATH: process.env.PATH ?? '', PIPELINE_HOME: home }, cwd: home, clock });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-adoption-'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

async function recipe(name: string, text: string): Promise<string> {
  const path = join(home, name);
  await writeFile(path, text);
  return path;
}

const SKIPPING = `version: 1
name: skipping
steps:
  hello: { run: "echo hello" }
  never: { run: "echo never", if: "\${{ false }}" }
`;

const CACHED = `version: 1
name: cached
inputs:
  colours: { type: array, default: [teal, sand] }
steps:
  bg:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} square" }
`;

const DYNAMIC = `version: 1
name: dynamic
steps:
  list: { run: 'echo "[]"' }
  images:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.list.outputs.json }}
    with: { prompt: "\${{ item }}" }
`;

describe('the command line a CI adopter meets', () => {
  it('report takes latest and a prefix of a run id, as runs show does', async () => {
    const run = await pipeline(['run', await recipe('skipping.yaml', SKIPPING), '--local', '--no-report']);
    expect(run.exitCode, run.stderr).toBe(0);
    const [id] = await readdir(join(home, 'runs'));
    const latest = await pipeline(['report', 'latest']);
    expect(latest.exitCode, latest.stderr).toBe(0);
    expect(latest.stdout).toMatch(new RegExp(`runs/${id}/report\\.html$`));
    const prefix = await pipeline(['report', id!.slice(0, 17), '--out', join(home, 'r.html')]);
    expect(prefix.exitCode, prefix.stderr).toBe(0);
    expect(readFileSync(join(home, 'r.html'), 'utf8')).toContain(id);
  });

  it('runs list counts a step skipped by its if as done', async () => {
    await pipeline(['run', await recipe('skipping.yaml', SKIPPING), '--local']);
    const listed = await pipeline(['runs', 'list']);
    expect(listed.stdout).toMatch(/skipping-\w+\s+succeeded\s.*\s2\/2\s/);
  });

  it('runs show names the items served from the cache', async () => {
    const path = await recipe('cached.yaml', CACHED);
    const cacheDir = join(home, 'cache');
    expect((await pipeline(['run', path, '--local', '--cache-dir', cacheDir])).exitCode).toBe(0);
    expect((await pipeline(['run', path, '--local', '--cache-dir', cacheDir])).exitCode).toBe(0);
    const shown = await pipeline(['runs', 'show', 'latest']);
    expect(shown.stdout).toMatch(/^bg\s+succeeded\s+\S+\s+bg\[0\], bg\[1\] from the cache$/m);
    const json = JSON.parse((await pipeline(['runs', 'show', 'latest', '--json'])).stdout);
    expect(json.steps[0].cached.sort()).toEqual([0, 1]);
  });

  it("the report's spend line says no estimate when nothing could be known before the run", async () => {
    const run = await pipeline(['run', await recipe('dynamic.yaml', DYNAMIC), '--local', '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/spent \$0\.0000$/m);
    const page = readFileSync(join(JSON.parse(run.stdout).run_dir, 'report.html'), 'utf8');
    expect(page).toMatch(/data-total="spent">\$0\.0000</);
    expect(page).not.toContain('an estimated at least');
  });

  it('a killed run is interrupted in runs list, runs show and its report, not running', async () => {
    const path = await recipe('slow.yaml', 'version: 1\nname: slow\nsteps:\n  wait: { run: "sleep 3" }\n');
    const child = spawn('node', [cli, 'run', path, '--local'], {
      env: { PATH: process.env.PATH ?? '', PIPELINE_HOME: home },
      cwd: home,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Killed once the step has started: the journal then says the run is under way.
    await new Promise<void>((resolve) => {
      let said = '';
      child.stderr.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes('▶ wait')) resolve();
      });
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const listed = await pipeline(['runs', 'list', '--json']);
    const slow = JSON.parse(listed.stdout).find((r: { name: string }) => r.name === 'slow');
    expect(slow.status).toBe('interrupted');
    expect((await pipeline(['runs', 'show', slow.run_id])).stdout).toMatch(/^status {3}interrupted/m);
    const report = await pipeline(['report', slow.run_id]);
    expect(readFileSync(resolve(home, report.stdout), 'utf8')).toContain('interrupted');
  });

  it('the resume command printed at Ctrl-C repeats the connection and cache flags, and works as printed', async () => {
    const gateway = await startLocalGateway({ latencyScale: 0 });
    try {
      const path = await recipe('slower.yaml', 'version: 1\nname: slower\nsteps:\n  wait: { run: "sleep 2" }\n');
      const cacheDir = join(home, 'my cache');
      const env = { PATH: process.env.PATH ?? '', PIPELINE_HOME: home, PIPELINE_API_KEY: gateway.apiKey };
      const args = ['run', path, '--base-url', gateway.baseUrl, '--cache-dir', cacheDir];
      const child = spawn('node', [cli, ...args], { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
      let said = '';
      await new Promise<void>((resolve) => {
        child.stderr.on('data', (chunk: Buffer) => {
          said += chunk.toString();
          if (said.includes('▶ wait')) resolve();
        });
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      const printed = /Resume with:\n {2}(.+)$/m.exec(said)?.[1];
      const [id] = (await readdir(join(home, 'runs'))).filter((name) => name.includes('-slower-'));
      expect(printed).toBe(`npx media-pipeline resume ${id} --base-url ${gateway.baseUrl} --cache-dir '${cacheDir}'`);
      // Pasted into a shell, with npx's lookup of this package's bin done by hand.
      const pasted = printed!.replace(/^npx media-pipeline /, `node '${cli}' `);
      const resumed = await execa('bash', ['-c', pasted], { reject: false, env, cwd: home });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
    } finally {
      await gateway.close();
    }
  });

  it('plan --json is plan --format json', async () => {
    const path = await recipe('cached.yaml', CACHED);
    const json = await pipeline(['plan', path, '--json', '--no-cache']);
    const format = await pipeline(['plan', path, '--format', 'json', '--no-cache']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(format.stdout));
    const both = await pipeline(['plan', path, '--json', '--format', 'mermaid']);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toBe('pipeline: --json asks for --format json; it cannot go with --format mermaid');
  });

  it("a long line's excerpt is centred on the error", async () => {
    const prompt = `${'a'.repeat(150)} \${{ steps.nope.outputs }} ${'b'.repeat(150)}`;
    const path = await recipe(
      'long.yaml',
      `version: 1\nname: long\nsteps:\n  a:\n    uses: vendor-a/vendor-a-v3-t2i\n    with:\n      prompt: "${prompt}"\n`,
    );
    const validated = await pipeline(['validate', path]);
    const [, , excerpt, marks] = validated.stderr.split('\n');
    const before = /…(a+) \$\{\{/.exec(excerpt!)![1]!.length;
    const after = /\}\} (b+)…/.exec(excerpt!)![1]!.length;
    expect(Math.abs(before - after)).toBeLessThanOrEqual(2);
    expect(marks!.indexOf('~')).toBe(excerpt!.indexOf('${{'));
  });
});
