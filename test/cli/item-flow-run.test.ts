import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const recipes = fileURLToPath(new URL('../../recipes/', import.meta.url));

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-item-flow-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const pipeline = (args: string[], env: Record<string, string> = {}) =>
  execa('node', [cli, ...args], { reject: false, env: { PIPELINE_HOME: home, CI: 'true', ...env }, cwd: home });
const runIdIn = (stderr: string) => /[✓✗] run (\S+) (?:succeeded|failed)/.exec(stderr)![1]!;

/** A chain of local commands: `make` fails for the item `bad` alone; `use` and `last` follow item by item. */
const COMMANDS = `version: 1
name: commands
steps:
  make:
    for_each: [a, b, bad, c]
    run: ["node", "-e", "if (process.argv[1] === 'bad') process.exit(3); console.log(process.argv[1])", "\${{ item }}"]
  use:
    for_each: \${{ steps.make.outputs[*].stdout }}
    run: ["node", "-e", "console.log(process.argv[1] + '!')", "\${{ item }}"]
  last:
    for_each: \${{ steps.use.outputs }}
    run: ["node", "-e", "console.log(process.argv[1] + '?')", "\${{ item.stdout }}"]
`;

/** Five prompts of a length the plan cannot know: the run starts under a cap that three images pass. */
const CAPPED = `version: 1
name: capped
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      prompt: Write 5 image prompts about bikes.
      schema: { type: object, required: [prompts], properties: { prompts: { type: array, items: { type: string } } } }
  hero:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ steps.brief.outputs.json.prompts }}
    with: { prompt: "\${{ item }}", aspect_ratio: "1:1" }
`;

describe('pipeline run: items that flow one by one', () => {
  it('tells the items a spending cap stopped in one line, and the step they belong to not again', async () => {
    const recipe = join(home, 'capped.yaml');
    await writeFile(recipe, CAPPED);
    const run = await pipeline(['run', recipe, '--local', '--max-cost', '0.05', '--yes']);
    expect(run.exitCode, run.stderr).toBe(3);
    const stopped = run.stderr.split('\n').filter((line) => line.startsWith('  ✗ '));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/^ {2}✗ hero\[\d\](, hero\[\d\])+ failed, each: was not sent: it costs \$0\.0300 /);
    expect(run.stderr).not.toMatch(/^ {2}hero: /m);
  });

  it('says a step whose items failed went on with continue_on_error, beside the failed items', async () => {
    const recipe = join(home, 'continued.yaml');
    await writeFile(recipe, COMMANDS.replace('  make:\n', '  make:\n    continue_on_error: true\n'));
    const run = await pipeline(['run', recipe, '--local']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^ {2}make: .*\(continued\)$/m);
    expect(run.stderr).toMatch(/^ {2}✗ make\[2\] failed: the command exited with 3/m);
  });

  it("prints a resume that keeps the run's remote cache flags: a read-only run's resume writes nothing to the bucket", async () => {
    const recipe = join(home, 'capped.yaml');
    await writeFile(recipe, CAPPED);
    // The bucket cannot be reached: one warning, and the run goes on with the local cache.
    const env = { AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' };
    const flags = ['--cache-remote', 's3://steps/ci', '--cache-remote-read-only'];
    const run = await pipeline(['run', recipe, '--local', '--max-cost', '0.05', '--yes', ...flags], env);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(
      /^ {2}npx media-pipeline resume \S+ --local --cache-remote s3:\/\/steps\/ci --cache-remote-read-only --max-cost USD$/m,
    );
  });

  it('exits 1, lists the failed item and the items it skipped, and run.json and --json carry the lineage', async () => {
    const recipe = join(home, 'commands.yaml');
    await writeFile(recipe, COMMANDS);
    const run = await pipeline(['run', recipe, '--local', '--json']);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain('– use[2] skipped: make[2] failed\n');
    expect(run.stderr).toContain('– last[2] skipped: make[2] failed\n');
    expect(run.stderr).toMatch(/^ {2}✗ make\[2\] failed: the command exited with 3/m);
    expect(run.stderr).toMatch(/^ {2}– skipped because make\[2\] failed: use\[2\], last\[2\]$/m);
    const report = JSON.parse(run.stdout);
    expect(report.steps).toEqual([
      {
        step: 'make',
        status: 'failed',
        failed_items: [{ index: 2, message: expect.stringMatching(/^the command exited with 3/) }],
      },
      { step: 'use', status: 'succeeded', items_from: 'make', skipped_items: [{ index: 2, reason: 'make[2] failed' }] },
      { step: 'last', status: 'succeeded', items_from: 'use', skipped_items: [{ index: 2, reason: 'make[2] failed' }] },
    ]);
    const summary = JSON.parse(readFileSync(join(report.run_dir, 'run.json'), 'utf8'));
    expect(summary.steps.find((s: { step: string }) => s.step === 'last')).toMatchObject({
      items_from: 'use',
      skipped_items: [{ index: 2, reason: 'make[2] failed' }],
    });
    // The report's card of a skipped item says why, and each card of use names the item it comes from.
    const page = readFileSync(join(report.run_dir, 'report.html'), 'utf8');
    expect(page).toContain('skipped: make[2] failed');
    expect(page).toContain('from make[1]');
    // Each card names its item, numbered as in the recipe (output files are numbered from 1).
    expect(page).toContain('use[1] · from make[1]');
    // One section for the chain, a line per item: make[i], use[i], last[i] side by side.
    expect(page).toContain('make → use → last');
    expect(page.match(/class="chain-row"/g)).toHaveLength(4);
    const show = await pipeline(['runs', 'show', runIdIn(run.stderr)]);
    expect(show.stdout).toMatch(/^last\s+succeeded \(1 item skipped\)/m);
    expect(show.stdout).toContain('– skipped because make[2] failed: use[2], last[2]');
  });
});

describe('a step cancelled by a failure upstream', () => {
  it('says why at the run’s end, in runs show, run.json and the report', async () => {
    const recipe = join(home, 'cancelled.yaml');
    await writeFile(recipe, `${COMMANDS}  total:\n    run: ["echo", "\${{ length(steps.make.outputs) }}"]\n`);
    const run = await pipeline(['run', recipe, '--local']);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain('  1 step cancelled: total (it needs make, which failed)\n');
    const runId = runIdIn(run.stderr);
    const show = await pipeline(['runs', 'show', runId]);
    expect(show.stdout).toContain('\ntotal cancelled: it needs make, which failed\n');
    const dir = join(home, 'runs', runId);
    const summary = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    expect(summary.steps.find((s: { step: string }) => s.step === 'total')).toMatchObject({
      status: 'cancelled',
      cancelled_because: 'it needs make, which failed',
    });
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain(
      '<div class="reason">cancelled: it needs make, which failed</div>',
    );
  });
});

describe('pipeline resume of a run whose process is alive', () => {
  it('refuses, naming the process, and sends nothing: two processes would pay for each item twice', async () => {
    const recipe = join(home, 'alive.yaml');
    await writeFile(
      recipe,
      'version: 1\nname: alive\nsteps:\n  wait: { run: ["node", "-e", "setTimeout(() => {}, 60000)"] }\n',
    );
    const child = pipeline(['run', recipe, '--local']);
    const runId = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const id = /^run (\S+): /m.exec(seen)?.[1];
        if (id && seen.includes('▶ wait')) resolve(id);
      });
      child.once('exit', () => reject(new Error(`the run ended before it started:\n${seen}`)));
    });
    const resumed = await pipeline(['resume', runId, '--local']);
    expect(resumed.exitCode).toBe(2);
    expect(resumed.stderr).toContain(`run ${runId} is still running (process ${child.pid} on this machine)`);
    child.kill('SIGINT');
    expect((await child).exitCode).toBe(130);
  });
});

describe('pipeline run stopped by Ctrl-C while items flow', () => {
  it('cancels the items downstream of one in flight rather than calling it failed, and --json still says the run', async () => {
    const recipe = join(home, 'stopped.yaml');
    await writeFile(
      recipe,
      COMMANDS.replace(
        "if (process.argv[1] === 'bad') process.exit(3);",
        "if (process.argv[1] === 'bad') setTimeout(() => {}, 60000);",
      ),
    );
    const child = pipeline(['run', recipe, '--local', '--json']);
    // Every step has started (its ▶ line): make[2] runs for a minute, and nothing downstream of it can.
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('▶ last')) resolve();
      });
      // Ended before it started every step: fail at once, saying what it printed.
      child.once('exit', () => reject(new Error(`the run ended before '▶ last':\n${seen}`)));
    });
    child.kill('SIGINT');
    const run = await child;
    expect(run.exitCode, run.stderr).toBe(130);
    expect(run.stderr).toContain('– use[2] skipped: the run was stopped\n');
    expect(run.stderr).toContain('– last[2] skipped: the run was stopped\n');
    expect(run.stderr).not.toContain('make[2] failed');
    // A wrapper reading stdout learns the run and what it got to, as after any other end.
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ run_id: expect.any(String), status: 'interrupted' });
    expect(report.steps[0]).toEqual({ step: 'make', status: 'cancelled' });
    for (const step of report.steps.slice(1))
      expect(step.skipped_items).toContainEqual({ index: 2, reason: 'the run was stopped' });
  });
});

describe('pipeline resume: every unfinished chain, and nothing else', () => {
  it('runs again the failed item and the items it skipped, and none of the items that finished', async () => {
    const marker = join(home, 'mended');
    const recipe = join(home, 'mendable.yaml');
    // `bad` fails until the marker file exists.
    await writeFile(
      recipe,
      COMMANDS.replace(
        `if (process.argv[1] === 'bad') process.exit(3); console.log(process.argv[1])", "\${{ item }}"]`,
        `if (process.argv[1] === 'bad' && !require('fs').existsSync(process.argv[2])) process.exit(3); console.log(process.argv[1])", "\${{ item }}", "${marker}"]`,
      ),
    );
    const first = await pipeline(['run', recipe, '--local']);
    expect(first.exitCode, first.stderr).toBe(1);
    const runId = runIdIn(first.stderr);
    await writeFile(marker, '');
    const resumed = await pipeline(['resume', runId, '--local', '--json']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const events = readFileSync(join(home, 'runs', runId, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; step?: string; index?: number; outputs?: unknown });
    const after = events.slice(events.findIndex((e) => e.type === 'run-resumed'));
    const rerun = after.filter((e) => e.type === 'item-finished').map((e) => `${e.step}[${e.index}]`);
    expect(rerun.sort()).toEqual(['last[2]', 'make[2]', 'use[2]']);
    const last = after.find((e) => e.type === 'step-finished' && e.step === 'last')!;
    expect((last.outputs as Array<{ stdout: string }>).map((o) => o.stdout)).toEqual(['a!?', 'b!?', 'bad!?', 'c!?']);
  });
});

interface Gateway {
  urls: Record<string, string>;
  process: ResultPromise;
}

async function serve(): Promise<Gateway> {
  const args = [cli, 'gateway', 'serve', '--port', '0', '--latency-scale', '0', '--no-ffmpeg', '--seed', '19'];
  const child = execa('node', args, { reject: false });
  const line = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (c: Buffer) => resolve(c.toString().split('\n')[0]!)),
  );
  return { urls: JSON.parse(line) as Record<string, string>, process: child };
}

/** A chain whose first for_each is an input list: every step's count, and so its price, is known. */
const CHAIN = `version: 1
name: chain
inputs:
  colours: { type: array, default: [red, green, blue, amber, teal] }
steps:
  t2i:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} background" }
  edit:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.t2i.outputs[*].images[0].url }}
    with: { prompt: add a badge, image: ["\${{ item }}"], size: 1024x1024 }
  v2v:
    uses: vendor-b/vendor-b-2.0-mini-v2v
    for_each: \${{ steps.edit.outputs }}
    with:
      video_urls: [${join(recipes, 'assets', 'ride.mp4')}]
      prompt: Restyle the ride in the look of [Image 1].
      reference_images: ["\${{ item.images[0].url }}"]
      duration: 5
      resolution: 720p
`;

describe('exact plans through chains', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await serve();
  });
  afterAll(async () => {
    gateway.process.kill('SIGTERM');
    await gateway.process;
  });

  it('prices every step of a chain over an input list exactly, and --max-cost below it sends nothing', async () => {
    const recipe = join(home, 'chain.yaml');
    await writeFile(recipe, CHAIN);
    const plan = await pipeline(['plan', recipe, '--format', 'json']);
    expect(plan.exitCode, plan.stderr).toBe(0);
    const estimate = JSON.parse(plan.stdout);
    expect(
      estimate.steps.map((s: { id: string; runs: number; cost: { usd: number } }) => [s.id, s.runs, s.cost.usd]),
    ).toEqual([
      ['t2i', 5, 0.15],
      ['edit', 5, 0.2],
      ['v2v', 5, 1.5],
    ]);
    expect(estimate.totals.tasks).toEqual({
      'vendor-a/vendor-a-v3-t2i': 5,
      'vendor-b/vendor-b-5.0-lite-edit': 5,
      'vendor-b/vendor-b-2.0-mini-v2v': 5,
    });
    expect(estimate.totals.requests).toMatchObject({ submissions: 15, polls: 15, dynamic_steps: [] });
    expect(estimate.totals.cost).toEqual({ usd: 1.85, lower_bound: false, dynamic_steps: [], unpriced_models: [] });
    const env = { PIPELINE_BASE_URL: gateway.urls.base_url!, PIPELINE_API_KEY: gateway.urls.api_key! };
    const stats = async () =>
      (
        (await (await fetch(`${gateway.urls.schema_url}/__emulator/stats`)).json()) as {
          tasks: { submitted: Record<string, number> };
        }
      ).tasks.submitted;
    const before = await stats();
    const capped = await pipeline(['run', recipe, '--max-cost', '1.8', '--no-cache'], env);
    expect(capped.exitCode).toBe(2);
    expect(capped.stderr).toContain('the estimated cost $1.8500 is over --max-cost $1.8000; nothing was sent');
    expect(await stats()).toEqual(before);
  });
});
