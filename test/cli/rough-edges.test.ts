import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let gateway: LocalGateway;
/** The gateway's and the commands' time: polls and task latencies take no real time. */
const clock = new ManualClock();
let home: string;

async function pipeline(args: string[], env: Record<string, string> = {}) {
  return pipelineInProcess(args, {
    clock,
    gateway,
    env: {
      PIPELINE_API_KEY: gateway.apiKey,
      PIPELINE_BASE_URL: gateway.baseUrl,
      PIPELINE_HOME: home,
      PATH: process.env.PATH ?? '',
      ...env,
    },
  });
}

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0 });
  home = await mkdtemp(join(tmpdir(), 'pipeline-edges-'));
});
afterAll(async () => {
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

const TOLERANT = `version: 1
name: tolerant
steps:
  flaky: { run: "echo broken >&2; exit 3", continue_on_error: true }
  report: { run: "echo \${{ steps.flaky.outcome }}" }
outputs:
  report: \${{ steps.report.outputs }}
`;

/** A recipe with a paid step: its run checks the gateway (key, balance) before it starts. */
const PAID = `version: 1
name: paid
steps:
  picture: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: a kite }, cache: false }
`;

describe('the command line without rough edges', () => {
  it('refuses --refresh with --no-cache, or an empty --redis, which would silently drop a flag, and sends nothing', async () => {
    const recipe = join(home, 'paid-refresh.yaml');
    await writeFile(recipe, PAID);
    // The gateway's routes this would have used: its check of the key, and the submission.
    const used = async () => {
      const stats = (await fetch(`${gateway.schemaUrl}/__emulator/stats`).then((r) => r.json())) as {
        requests: { by_route: Record<string, number> };
      };
      const routes = stats.requests.by_route;
      return (routes['GET /api/v1/apikey/validate'] ?? 0) + (routes['POST /api/v1/{provider}/{model_id}'] ?? 0);
    };
    const before = await used();
    const run = await pipeline(['run', recipe, '--refresh', '--no-cache']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--refresh and --no-cache cannot go together');
    expect(await used()).toBe(before);
    // An empty --redis (`--redis "$PIPELINE_REDIS_URL"` with the variable unset) ran unshared, unsaid.
    const unshared = await pipeline(['run', recipe, '--redis', '']);
    expect(unshared.exitCode).toBe(2);
    expect(unshared.stderr).toContain('--redis was given an empty URL (an unset variable?)');
    expect(await used()).toBe(before);
  });

  it('continue_on_error: the run exits 0, --out copies the outputs, runs show lists the step as failed and continued', async () => {
    const recipe = join(home, 'tolerant.yaml');
    await writeFile(recipe, TOLERANT);
    const out = join(home, 'out');
    const run = await pipeline(['run', recipe, '--out', out]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /✗ flaky failed: the command exited with 3:\nbroken \(continue_on_error: the run goes on\)/,
    );
    expect(run.stderr).toMatch(/✓ run \S+ succeeded/);
    expect(JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))).toMatchObject({ stdout: 'failure' });
    const [id] = await readdir(join(home, 'runs'));
    const summary = JSON.parse(await readFile(join(home, 'runs', id!, 'run.json'), 'utf8'));
    expect(summary.status).toBe('succeeded');
    expect(summary.steps.find((s: { step: string }) => s.step === 'flaky')).toMatchObject({
      status: 'failed',
      continued: true,
    });
    const shown = await pipeline(['runs', 'show', 'latest']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^flaky\s+failed \(continued\)/m);
    expect(shown.stdout).toMatch(/^flaky failed \(command-failed, continued\): the command exited with 3/m);
  });

  it('--out says which files in the folder this run did not write, and leaves them', async () => {
    const recipe = join(home, 'tolerant.yaml');
    await writeFile(recipe, TOLERANT);
    const out = join(home, 'out-stale');
    await mkdir(join(out, 'row-9'), { recursive: true });
    await writeFile(join(out, 'images-3.png'), 'an earlier run made three');
    await writeFile(join(out, 'row-9', 'report.json'), '{}');
    const run = await pipeline(['run', recipe, '--out', out]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `--out: ${out} also holds 2 files this run did not write, left as they were: images-3.png, ${join('row-9', 'report.json')}. Empty the folder first if only this run's outputs should be there`,
    );
    expect(existsSync(join(out, 'images-3.png'))).toBe(true);
    // A folder of this run's files alone says nothing more.
    const again = await pipeline(['run', recipe, '--out', join(home, 'out-fresh')]);
    expect(again.stderr).not.toContain('did not write');
  });

  it('runs show takes latest and a unique prefix of a run id; an ambiguous prefix lists the runs', async () => {
    const recipe = join(home, 'tolerant.yaml');
    await writeFile(recipe, TOLERANT);
    await pipeline(['run', recipe]);
    const ids = (await readdir(join(home, 'runs'))).sort();
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const newest = ids.at(-1)!;
    const latest = await pipeline(['runs', 'show', 'latest', '--json']);
    expect(JSON.parse(latest.stdout).run_id).toBe(newest);
    const prefix = await pipeline(['runs', 'show', newest.slice(0, -2), '--json']);
    expect(JSON.parse(prefix.stdout).run_id).toBe(newest);
    const ambiguous = await pipeline(['runs', 'show', '2']);
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toMatch(/^pipeline: '2' is the start of \d+ run ids \(.+\); give more of the id$/m);
    const none = await pipeline(['runs', 'show', 'nope']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/^pipeline: no run nope in .+\/runs \(pipeline runs list shows them\)$/m);
  });

  it('runs show says once for many steps that were cancelled for one reason, and names the row of each failure', async () => {
    const recipe = join(home, 'cancelled-rows.yaml');
    await writeFile(
      recipe,
      'version: 1\nname: rows\ninputs:\n  n: { type: integer }\nsteps:\n  broken: { run: "exit 3" }\n  after: { run: "echo ${{ inputs.n }}", needs: [broken] }\n',
    );
    await writeFile(join(home, 'rows.csv'), 'n\n1\n2\n3\n');
    const run = await pipeline(['run', recipe, '--batch', join(home, 'rows.csv'), '--json']);
    expect(run.exitCode, run.stderr).toBe(1);
    const show = await pipeline(['runs', 'show', JSON.parse(run.stdout).run_id]);
    expect(show.stdout).toContain('\nrow 1 after, row 2 after, row 3 after cancelled: it needs broken, which failed\n');
    // And each failure names its row.
    for (const row of [1, 2, 3])
      expect(show.stdout.split('\n')).toContain(`row ${row} broken failed (command-failed): the command exited with 3`);
  });

  it("a batch's run end counts the rows of its cancelled steps, and --json's row counts from 0 as outputs does", async () => {
    const recipe = join(home, 'one-bad-row.yaml');
    await writeFile(
      recipe,
      'version: 1\nname: rows\ninputs:\n  n: { type: integer }\nsteps:\n  check: { run: "test ${{ inputs.n }} -ne 2" }\n  after: { run: "echo ${{ inputs.n }}", needs: [check] }\n',
    );
    await writeFile(join(home, 'rows.csv'), 'n\n1\n2\n');
    const out = join(home, 'out-of-a-failed-run');
    const run = await pipeline(['run', recipe, '--batch', join(home, 'rows.csv'), '--json', '--out', out]);
    expect(run.exitCode, run.stderr).toBe(1);
    // A failed run copies nothing, and says so, with the resume that would.
    expect(run.stderr).toMatch(
      /^--out: nothing was copied to .*out-of-a-failed-run: outputs are copied when the run succeeds \(npx media-pipeline resume \S+ --out \S+out-of-a-failed-run runs again what did not\)/m,
    );
    expect(existsSync(out)).toBe(false);
    expect(run.stderr).toContain('✗ row 2 check failed: the command exited with 1');
    expect(run.stderr).toMatch(/^ {2}1 step in 1 row cancelled: after \(row 2\)$/m);
    const { steps, outputs } = JSON.parse(run.stdout);
    expect(outputs).toHaveLength(2);
    expect(steps).toContainEqual({ row: 1, step: 'after', status: 'cancelled' });
    expect(steps).toContainEqual({ row: 0, step: 'after', status: 'succeeded' });
  });

  it('--set name without = is a usage error that says so', async () => {
    const result = await pipeline([
      'validate',
      fileURLToPath(new URL('../../recipes/launch-kit.yaml', import.meta.url)),
      '--set',
      'topic',
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      'pipeline: --set takes name=value, got "topic": write --set topic=VALUE (--set topic= for empty text)',
    );
  });

  it('writing to a closed pipe exits quietly, with no stack trace', async () => {
    const child = spawn('node', [cli, 'runs', 'list'], {
      env: { ...process.env, PIPELINE_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the command writes a byte, as with `| head -1` on a long list.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('a run whose console pipe closes goes on to its end, unprinted, its journal whole: exit 1, not a run cut off', async () => {
    const runHome = join(home, 'closed-pipe');
    const child = spawn('node', [cli, 'run', 'recipes/starter.yaml', '--local', '--no-cache'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, PIPELINE_HOME: runHome, PIPELINE_LOCAL_LATENCY_SCALE: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Both readers gone, as with `pipeline run … 2>&1 | head -1` once its first line is read.
    child.stdout.destroy();
    child.stderr.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    const [runId] = await readdir(join(runHome, 'runs'));
    const journal = await readFile(join(runHome, 'runs', runId!, 'journal.jsonl'), 'utf8');
    expect(JSON.parse(journal.trim().split('\n').at(-1)!)).toMatchObject({ type: 'run-finished', status: 'succeeded' });
  });

  it('an unreachable gateway fails in under 5 s, with the address and a hint, before a run exists', async () => {
    const recipe = join(home, 'paid.yaml');
    await writeFile(recipe, PAID);
    const before = (await readdir(join(home, 'runs')).catch(() => [])).length;
    // On the manual clock every wait of the command (a retry's backoff) counts, and nothing else.
    const started = clock.now();
    const result = await pipeline(['run', recipe], { PIPELINE_BASE_URL: 'http://127.0.0.1:9/api/v1' });
    const took = clock.now() - started;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(
      'pipeline: could not connect to 127.0.0.1:9 (PIPELINE_BASE_URL): connection refused. Is the gateway running there? --local uses the built-in one',
    );
    expect(took).toBeLessThan(5000);
    expect((await readdir(join(home, 'runs')).catch(() => [])).length).toBe(before);
    // A recipe of local commands alone needs no gateway: it runs, and asks nothing of it.
    await writeFile(join(home, 'tolerant.yaml'), TOLERANT);
    const local = await pipeline(['run', join(home, 'tolerant.yaml')], {
      PIPELINE_BASE_URL: 'http://127.0.0.1:9/api/v1',
    });
    expect(local.exitCode, local.stderr).toBe(0);
  });

  it('resume --json of a run that had succeeded prints JSON: the run as it ended, and resumed: false', async () => {
    await writeFile(join(home, 'tolerant.yaml'), TOLERANT);
    const run = await pipeline(['run', join(home, 'tolerant.yaml'), '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const ran = JSON.parse(run.stdout);
    const again = await pipeline(['resume', ran.run_id, '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    const said = JSON.parse(again.stdout);
    expect(said).toMatchObject({ run_id: ran.run_id, status: 'succeeded', resumed: false, run_dir: ran.run_dir });
    // What the run's journal tells, as the run's own --json said it.
    for (const key of ['outputs_dir', 'outputs', 'files', 'skipped_rows', 'steps'])
      expect(said[key], key).toEqual(ran[key]);
    expect(said.steps).toEqual([
      { step: 'flaky', status: 'failed', continued: true },
      { step: 'report', status: 'succeeded' },
    ]);
  });

  it('a resume against another gateway than its run was started on is refused, with nothing sent to it', async () => {
    const recipe = join(home, 'paid-then-broken.yaml');
    await writeFile(recipe, `${PAID}  broken: { run: "exit 3", needs: [picture] }\n`);
    const failed = await pipeline(['run', recipe, '--json']);
    expect(failed.exitCode, failed.stderr).toBe(1);
    const runId = JSON.parse(failed.stdout).run_id as string;
    const other = await startLocalGateway({ clock, latencyScale: 0 });
    try {
      const resumed = await pipeline(['resume', runId], { PIPELINE_BASE_URL: other.baseUrl });
      expect(resumed.exitCode).toBe(2);
      expect(resumed.stderr).toContain(`run ${runId} was started against ${gateway.baseUrl}`);
      expect(resumed.stderr).toContain(`this resume would go to ${other.baseUrl}`);
      expect(resumed.stderr).toContain(`set PIPELINE_BASE_URL (or --base-url) to ${gateway.baseUrl}`);
      expect(other.stats().requests.total).toBe(0);
      expect(resumed.stderr).toContain('or, if that is the same gateway at another address, with --force');
      // And against the built-in gateway.
      const local = await pipeline(['resume', runId, '--local']);
      expect(local.exitCode).toBe(2);
      expect(local.stderr).toContain('would go to the built-in gateway (--local)');
    } finally {
      await other.close();
    }
    // Against its own gateway it goes on (and fails again at the broken step, the picture not paid twice).
    const again = await pipeline(['resume', runId]);
    expect(again.exitCode, again.stderr).toBe(1);
    expect(again.stderr).not.toContain('was started against');
    // At another address of the same gateway (localhost for 127.0.0.1), --force goes on, saying so.
    const elsewhere = gateway.baseUrl.replace('127.0.0.1', 'localhost');
    const forced = await pipeline(['resume', runId, '--force'], { PIPELINE_BASE_URL: elsewhere });
    expect(forced.exitCode, forced.stderr).toBe(1);
    expect(forced.stderr).toContain(
      `warning: --force: run ${runId} was started against ${gateway.baseUrl}; going on against ${elsewhere}`,
    );
  });

  it('a gateway whose TLS certificate cannot be verified fails at once, saying so, not as a dropped connection retried', async () => {
    const fixtures = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
    const { createServer } = await import('node:https');
    const server = createServer(
      {
        key: await readFile(join(fixtures, 'self-signed-key.pem')),
        cert: await readFile(join(fixtures, 'self-signed-cert.pem')),
      },
      (_request, response) => response.end('{}'),
    );
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as { port: number };
    try {
      const recipe = join(home, 'paid.yaml');
      await writeFile(recipe, PAID);
      const result = await pipeline(['run', recipe], { PIPELINE_BASE_URL: `https://127.0.0.1:${port}/api/v1` });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toBe(
        `pipeline: could not connect to 127.0.0.1:${port} (PIPELINE_BASE_URL): the TLS certificate could not be verified ` +
          "(DEPTH_ZERO_SELF_SIGNED_CERT): it is self-signed; for a gateway behind a private certificate authority, give Node that authority's certificate with NODE_EXTRA_CA_CERTS=/path/to/ca.pem",
      );
      // That no request or step retries it is REQUEST_CASES' 'TLS certificate refused' (test/support).
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });

  it('an unreachable text gateway or web tools address set apart fails at once too, where the recipe calls it', async () => {
    const calls = join(home, 'calls.yaml');
    await writeFile(
      calls,
      'version: 1\nname: calls\nsteps:\n  look: { uses: web-search, with: { query: kites } }\n  say: { uses: llm, with: { model: vendor-x/writer-1, prompt: hi } }\n',
    );
    const before = (await readdir(join(home, 'runs')).catch(() => [])).length;
    for (const variable of ['PIPELINE_LLM_URL', 'PIPELINE_TOOL_URL']) {
      const result = await pipeline(['run', calls, '--no-cache'], { [variable]: 'http://127.0.0.1:9/elsewhere' });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toBe(
        `pipeline: could not connect to 127.0.0.1:9 (${variable}): connection refused. Is it running there?`,
      );
    }
    expect((await readdir(join(home, 'runs')).catch(() => [])).length).toBe(before);
    // A recipe that calls neither runs whatever those addresses are.
    const recipe = join(home, 'paid.yaml');
    await writeFile(recipe, PAID);
    const images = await pipeline(['run', recipe], { PIPELINE_LLM_URL: 'http://127.0.0.1:9/elsewhere' });
    expect(images.exitCode, images.stderr).toBe(0);
  });

  it('PIPELINE_CACHE_REMOTE_READ_ONLY that is neither true nor false is a usage error, not taken as false', async () => {
    const recipe = join(home, 'paid.yaml');
    await writeFile(recipe, PAID);
    const result = await pipeline(['run', recipe], { PIPELINE_CACHE_REMOTE_READ_ONLY: 'maybe' });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      'pipeline: PIPELINE_CACHE_REMOTE_READ_ONLY must be true or false (1/0, yes/no), got "maybe"',
    );
  });

  it('resume says when the recipe was edited since the run started: it runs the copy the run kept', async () => {
    const recipe = join(home, 'edited.yaml');
    await writeFile(recipe, PAID.replace('a kite', 'a red kite'));
    // The first submission is refused: the run fails, and a resume would send it again.
    gateway.injectFault({ kind: 'status', status: 400, route: 'POST /api/v1/{provider}/{model_id}', times: 1 });
    const failed = await pipeline(['run', recipe]);
    expect(failed.exitCode).toBe(1);
    const [id] = (await readdir(join(home, 'runs')))
      .filter((name) => name.includes('-paid-'))
      .sort()
      .reverse();
    // The user fixes the prompt, then resumes, expecting the fix to run.
    await writeFile(recipe, PAID.replace('a kite', 'a blue kite'));
    const resumed = await pipeline(['resume', id!]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `warning: ${recipe} changed since run ${id} started; resume runs the recipe the run kept (${join(home, 'runs', id!, 'recipe.yaml')}), without the changes`,
    );
    const journal = await readFile(join(home, 'runs', id!, 'journal.jsonl'), 'utf8');
    expect(journal).toContain('a red kite');
    expect(journal).not.toContain('a blue kite');
  });

  it('a key the gateway rejects (401) fails before the run is created, without showing the key', async () => {
    const recipe = join(home, 'paid.yaml');
    await writeFile(recipe, PAID);
    const before = (await readdir(join(home, 'runs')).catch(() => [])).length;
    const result = await pipeline(['run', recipe], { PIPELINE_API_KEY: 'sk-wrong-key-0123456789' });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /^pipeline: the gateway at 127\.0\.0\.1:\d+ refused the API key \(PIPELINE_API_KEY\); nothing was run: .*401/,
    );
    expect(result.stderr).not.toContain('sk-wrong-key-0123456789');
    expect((await readdir(join(home, 'runs')).catch(() => [])).length).toBe(before);
  });
});

describe('--help', () => {
  const commands = [
    'run',
    'resume',
    'validate',
    'plan',
    'runs show',
    'runs list',
    'gateway serve',
    'account',
    'models schema',
    'files upload',
    'task wait',
    'cache prune',
    'report',
    'init',
  ];
  it.each(commands)('%s has examples and the exit codes', async (command) => {
    const help = await pipeline([...command.split(' '), '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`\\nExamples:\\n  npx media-pipeline ${command}[ \\n]`));
    // The gateway serves until it is stopped: its codes say so, not what a run's say.
    const worked = command === 'gateway serve' ? 'stopped by SIGINT or SIGTERM, after serving' : 'it worked';
    expect(help.stdout).toMatch(
      new RegExp(`\\nExit codes:\\n {2}0 {4}${worked}\\n {2}1 {4}.+\\n {2}2 {4}a usage error`),
    );
    // Only a run's steps fail, and only a command that reads a recipe can be refused for one.
    if (command !== 'run' && command !== 'resume') expect(help.stdout).not.toContain('a step failed');
    if (!['run', 'resume', 'validate', 'plan', 'account'].includes(command))
      expect(help.stdout).not.toContain('a recipe with errors');
  });

  it('worker --help does not offer --local, which a worker refuses', async () => {
    const help = await pipeline(['worker', '--help']);
    expect(help.stdout).toContain('--redis <url>');
    expect(help.stdout).not.toContain('--local');
    const refused = await pipeline(['worker', '--local', '--redis', 'redis://127.0.0.1:1']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('set PIPELINE_BASE_URL, not --local');
  });

  it('run --help names PIPELINE_HOME and its default; resume describes its argument', async () => {
    const run = await pipeline(['run', '--help']);
    expect(run.stdout).toContain(
      'PIPELINE_HOME      where runs, logs and caches are kept (default: .pipeline in the working directory)',
    );
    expect(run.stdout).toContain('130  stopped by Ctrl-C');
    const resume = await pipeline(['resume', '--help']);
    expect(resume.stdout.replace(/\s+/g, ' ')).toContain(
      'run_id a run id, a prefix of exactly one run id, or latest (the newest run)',
    );
  });
});

describe('--batch with bad rows', () => {
  const ROWS =
    'title,style,aspect_ratio\nGood one,photo,16:9\nToo,many,cells,here\nBad ratio,photo,5:5\nGood two,photo,1:1\n';
  const recipe = fileURLToPath(new URL('../../recipes/batch-thumbnails.yaml', import.meta.url));

  it('reports every bad row, a column-count error hiding none of the others', async () => {
    const rows = join(home, 'rows.csv');
    await writeFile(rows, ROWS);
    const result = await pipeline(['validate', recipe, '--batch', rows]);
    expect(result.exitCode).toBe(2);
    const errors = result.stderr.split('\n').filter((line) => line.includes(': error: '));
    expect(errors).toEqual([
      `${rows}:3:1: error: this row has 4 values but the header has 3 columns (title, style, aspect_ratio)`,
      `${rows}:4:1: error: input 'aspect_ratio' must be one of "16:9", "9:16", "1:1", "4:3", "3:4", "3:2", "2:3", "21:9", got "5:5"`,
    ]);
  });

  it('--skip-invalid-rows runs the valid rows and lists the skipped ones', async () => {
    const rows = join(home, 'rows.csv');
    await writeFile(rows, ROWS);
    const result = await pipeline(['run', recipe, '--batch', rows, '--skip-invalid-rows', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `--skip-invalid-rows: 2 rows left out, 2 kept:\n  ${rows}:3:1: warning: this row has 4 values`,
    );
    expect(result.stderr).toContain(`  ${rows}:4:1: warning: input 'aspect_ratio' must be one of`);
    expect(JSON.parse(result.stdout).outputs).toHaveLength(2);
  });
});
