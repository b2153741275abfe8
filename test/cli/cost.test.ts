import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { readJournal } from '../../src/store/journal.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const recipes = fileURLToPath(new URL('../../recipes/', import.meta.url));
const T2I = 'vendor-a/vendor-a-v3-t2i';
const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

interface Stats {
  requests: { by_route: Record<string, number>; by_status: Record<string, number>; by_team: Record<string, number> };
  tasks: { submitted: Record<string, number> };
  balances: Record<string, number>;
}

interface Gateway {
  urls: Record<string, string>;
  local: LocalGateway;
  stats(): Promise<Stats>;
}

/** The runs' and the gateways' time: polls and task latencies take no real time. */
const clock = new ManualClock();

/** The built-in gateway in this process, as `pipeline gateway serve --latency-scale 0 --no-ffmpeg --seed 12` runs it. */
async function serve(options: { balanceUsd?: number; realTime?: boolean } = {}): Promise<Gateway> {
  const { realTime, ...more } = options;
  const local = await startLocalGateway({
    ...(realTime ? {} : { clock }),
    latencyScale: 0,
    useFfmpeg: false,
    seed: 12,
    ...more,
  });
  const urls = { base_url: local.baseUrl, schema_url: local.schemaUrl, api_key: local.apiKey };
  return {
    urls,
    local,
    stats: async () => (await fetch(`${urls.schema_url}/__emulator/stats`)).json() as Promise<Stats>,
  };
}

async function stop(gateway: Gateway): Promise<void> {
  await gateway.local.close();
}

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-cost-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const envFor = (gateway: Gateway) => ({
  PIPELINE_HOME: home,
  PIPELINE_BASE_URL: gateway.urls.base_url!,
  PIPELINE_API_KEY: gateway.urls.api_key!,
  CI: 'true',
});
/** `pipeline …` in this process, through the bin's entry point, its environment over this process's. */
const pipeline = (
  args: string[],
  env: Record<string, string> = { PIPELINE_HOME: home, CI: 'true' },
  gateway?: Gateway,
) =>
  pipelineInProcess(args, {
    env: { ...process.env, ...env },
    cwd: home,
    clock,
    ...(gateway ? { gateway: gateway.local } : {}),
  });
const summaryOf = (runId: string) => JSON.parse(readFileSync(join(home, 'runs', runId, 'run.json'), 'utf8'));
const runIdIn = (stderr: string) => /[✓✗] run (\S+) (?:succeeded|failed|stopped)/.exec(stderr)![1]!;
const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);
const usd = (n: number) => Math.round(n * 10_000) / 10_000;
const lines = (...text: string[]) => `${text.join('\n')}\n`;

/** A list of prompts from the text model (its length is known only at run time), one picture each. */
const DYNAMIC = `version: 1
name: dynamic
settings: { concurrency: 4 }
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      prompt: Write 5 image prompts about bikes
      schema: { type: object, required: [prompts], properties: { prompts: { type: array, items: { type: string } } } }
  image:
    uses: ${T2I}
    for_each: \${{ steps.brief.outputs.json.prompts }}
    with: { prompt: "\${{ item }}", aspect_ratio: "1:1" }
`;

const FIVE = `version: 1
name: five
settings: { concurrency: 1 }
steps:
  image:
    uses: ${T2I}
    for_each: ["a", "b", "c", "d", "e"]
    with: { prompt: "picture \${{ item }}" }
`;

describe('pipeline plan: the cost', () => {
  it('prices launch-kit exactly: the schema of its brief fixes count prompts, so the heroes are known', async () => {
    const plan = await pipeline(['plan', join(recipes, 'launch-kit.yaml'), '--format', 'json']);
    expect(plan.exitCode, plan.stderr).toBe(0);
    const estimate = JSON.parse(plan.stdout);
    const cost = Object.fromEntries(estimate.steps.map((s: { id: string; cost: unknown }) => [s.id, s.cost]));
    expect(cost.research).toBeNull();
    // 2k counts 2 images at $0.03, 3 of them; one edited image at $0.04; 5 s of 720p video at $0.06 a second.
    expect(cost.hero).toEqual({ usd: 0.18, per_run_usd: 0.06, dynamic: false, cached_runs: 0 });
    expect(cost.branded).toEqual({ usd: 0.04, per_run_usd: 0.04, dynamic: false, cached_runs: 0 });
    expect(cost.clip).toEqual({ usd: 0.3, per_run_usd: 0.3, dynamic: false, cached_runs: 0 });
    expect(estimate.totals.cost).toEqual({ usd: 0.52, lower_bound: false, dynamic_steps: [], unpriced_models: [] });
    const text = await pipeline(['plan', join(recipes, 'launch-kit.yaml'), '--set', 'count=5']);
    expect(text.stdout).toMatch(/hero\s+vendor-a\/vendor-a-v3-t2i\s+5\s+\$0\.3000/);
    expect(text.stdout).toMatch(/^cost\s+\$0\.6400$/m);
    // The edit reads the first hero alone: it waits for that one, as plan says.
    expect(estimate.steps.find((s: { id: string }) => s.id === 'branded').chosen_items).toEqual([
      { step: 'hero', indices: [0] },
    ]);
    expect(text.stdout).toMatch(/^items\s+branded ← hero\[0\]$/m);
    expect(text.stdout).toMatch(/branded\s+vendor-b\/vendor-b-5\.0-lite-edit\s+1\s+\$0\.0400\s+hero\[0\]/);
  });

  it('prices a fan-out over an LLM list the schema leaves open per run, as a lower bound', async () => {
    const recipe = join(home, 'open-brief.yaml');
    await writeFile(recipe, DYNAMIC);
    const estimate = JSON.parse((await pipeline(['plan', recipe, '--format', 'json'])).stdout);
    const image = estimate.steps.find((s: { id: string }) => s.id === 'image');
    expect(image.cost).toEqual({ usd: 0, per_run_usd: 0.03, dynamic: true, cached_runs: 0 });
    expect(estimate.totals.cost).toMatchObject({ usd: 0, lower_bound: true, dynamic_steps: ['image'] });
    const text = await pipeline(['plan', recipe]);
    expect(text.stdout).toMatch(/image\s+vendor-a\/vendor-a-v3-t2i\s+dynamic\s+\$0\.0300 × n unknown/);
  });

  it('prices batch-thumbnails as 6 tasks at $0.03, and --prices overrides the bundled price', async () => {
    const args = ['plan', join(recipes, 'batch-thumbnails.yaml'), '--batch', join(recipes, 'data', 'thumbnails.csv')];
    const plan = JSON.parse((await pipeline([...args, '--format', 'json'])).stdout);
    expect(plan.totals.tasks).toEqual({ [T2I]: 6 });
    expect(plan.totals.cost).toMatchObject({ usd: 0.18, lower_bound: false });
    await writeFile(join(home, 'prices.yaml'), `${T2I}: 0.05\nvendor-z/other: { usd: 1, unit: task }\n`);
    const priced = JSON.parse(
      (await pipeline([...args, '--format', 'json', '--prices', join(home, 'prices.yaml')])).stdout,
    );
    expect(priced.totals.cost.usd).toBe(0.3);
    expect((await pipeline([...args])).stdout).toMatch(/^cost\s+\$0\.1800$/m);
  });

  it('shows a model without a known price as unknown, never as zero, and refuses a cap it cannot hold', async () => {
    // A model known only from a live schema in the cache: the gateway's copy carries no price.
    const cache = join(home, 'cache', 'schemas');
    await mkdir(cache, { recursive: true });
    const schema = { type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' } } };
    await writeFile(join(cache, 'vendor-z--z-1.json'), JSON.stringify({ fetched_at: Date.now(), schema }));
    // A live copy of a bundled model has no x-price either: the bundled rule still prices it.
    const { 'x-price': _price, ...live } = JSON.parse(
      readFileSync(join(recipes, '..', 'schemas', 'models', 'vendor-a--vendor-a-v3-t2i.json'), 'utf8'),
    );
    await writeFile(
      join(cache, 'vendor-a--vendor-a-v3-t2i.json'),
      JSON.stringify({ fetched_at: Date.now(), schema: live }),
    );
    const recipe = join(home, 'new-model.yaml');
    await writeFile(
      recipe,
      lines(
        'version: 1',
        'name: new',
        'steps:',
        '  a:',
        '    uses: vendor-z/z-1',
        '    with: { prompt: x }',
        '  b:',
        `    uses: ${T2I}`,
        '    with: { prompt: x }',
      ),
    );
    const plan = JSON.parse((await pipeline(['plan', recipe, '--format', 'json'])).stdout);
    expect(plan.steps[0].cost).toEqual({ usd: null, per_run_usd: null, dynamic: false, cached_runs: 0 });
    expect(plan.totals.cost).toEqual({
      usd: 0.03,
      lower_bound: true,
      dynamic_steps: [],
      unpriced_models: ['vendor-z/z-1'],
    });
    const text = await pipeline(['plan', recipe]);
    expect(text.stdout).toMatch(/^1\s+a\s+vendor-z\/z-1\s+1\s+price unknown/m);
    expect(text.stdout).toMatch(
      /^cost\s+at least \$0\.0300, a lower bound: price unknown for vendor-z\/z-1 \(give one with --prices or/m,
    );
    const capped = await pipeline(['run', recipe, '--local', '--max-cost', '1']);
    expect(capped.exitCode).toBe(2);
    expect(capped.stderr).toContain('--max-cost cannot be held: the price of vendor-z/z-1 is unknown');
    await writeFile(join(home, 'z.yaml'), 'vendor-z/z-1: 0.5\n');
    const priced = JSON.parse(
      (await pipeline(['plan', recipe, '--format', 'json', '--prices', join(home, 'z.yaml')])).stdout,
    );
    expect(priced.totals.cost).toMatchObject({ usd: 0.53, lower_bound: false });
    await rm(cache, { recursive: true });
  });

  it('reads settings.prices, and a --prices rule replaces it', async () => {
    const recipe = join(home, 'unpriced.yaml');
    await writeFile(
      recipe,
      lines(
        'version: 1',
        'name: unpriced',
        'settings:',
        `  prices: { ${T2I}: { usd: 0.01, unit: image, multiply: [n] } }`,
      ) + lines('steps:', '  a:', `    uses: ${T2I}`, '    with: { prompt: x, n: 3 }'),
    );
    const plan = JSON.parse((await pipeline(['plan', recipe, '--format', 'json'])).stdout);
    expect(plan.totals.cost.usd).toBe(0.03);
    await writeFile(join(home, 'rule.json'), JSON.stringify({ [T2I]: { usd: 0.02, unit: 'image' } }));
    const flat = JSON.parse(
      (await pipeline(['plan', recipe, '--format', 'json', '--prices', join(home, 'rule.json')])).stdout,
    );
    // The file's rule replaces the recipe's: no multiply, so n does not count.
    expect(flat.totals.cost.usd).toBe(0.02);
  });
});

describe('bad money input', () => {
  it('refuses a malformed price file, naming it, with exit 2', async () => {
    const recipe = join(recipes, 'batch-thumbnails.yaml');
    await writeFile(join(home, 'broken.yaml'), `${T2I}: [0.03\n`);
    const broken = await pipeline(['plan', recipe, '--set', 'title=x', '--prices', join(home, 'broken.yaml')]);
    expect(broken.exitCode).toBe(2);
    // The parser's own words, whole: not cut off at the colon that led to its excerpt.
    expect(broken.stderr).toMatch(/--prices: .*broken\.yaml is not YAML or JSON: .*line \d+, column \d+$/);
    await writeFile(join(home, 'negative.json'), JSON.stringify({ [T2I]: -1 }));
    const negative = await pipeline([
      'run',
      recipe,
      '--set',
      'title=x',
      '--local',
      '--prices',
      join(home, 'negative.json'),
    ]);
    expect(negative.exitCode).toBe(2);
    expect(negative.stderr).toContain(`negative.json: ${T2I} must be a price of at least 0 USD, got -1`);
    await writeFile(join(home, 'keys.json'), JSON.stringify({ [T2I]: { usd: 0.03, per: 'image' } }));
    const unknownKey = await pipeline(['plan', recipe, '--set', 'title=x', '--prices', join(home, 'keys.json')]);
    expect(unknownKey.exitCode).toBe(2);
    expect(unknownKey.stderr).toContain("has an unknown key 'per'");
  });

  it('refuses a negative --max-cost and a malformed settings.prices with exit 2', async () => {
    const negative = await pipeline([
      'run',
      join(recipes, 'batch-thumbnails.yaml'),
      '--set',
      'title=x',
      '--local',
      '--max-cost',
      '-0.5',
    ]);
    expect(negative.exitCode).toBe(2);
    expect(negative.stderr).toContain('--max-cost takes a number of at least 0, got "-0.5"');
    const recipe = join(home, 'bad-prices.yaml');
    await writeFile(
      recipe,
      lines(
        'version: 1',
        'name: bad',
        'settings:',
        `  prices: { ${T2I}: cheap }`,
        'steps:',
        '  a:',
        `    uses: ${T2I}`,
        '    with: { prompt: x }',
      ),
    );
    const bad = await pipeline(['validate', recipe]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr + bad.stdout).toMatch(
      /bad-prices\.yaml:4:\d+: error: settings\.prices: vendor-a\/vendor-a-v3-t2i must be a number \(USD\)/,
    );
  });
});

describe('pipeline run against a gateway with $100', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await serve();
  });
  afterAll(async () => stop(gateway));

  it('charges what plan estimated: launch-kit costs its steps, 3 heroes included', async () => {
    const before = (await gateway.stats()).balances.local!;
    const run = await pipeline(['run', join(recipes, 'launch-kit.yaml')], envFor(gateway), gateway);
    expect(run.exitCode, run.stderr).toBe(0);
    const charged = usd(before - (await gateway.stats()).balances.local!);
    expect(charged).toBe(usd(0.34 + 3 * 0.06));
    const summary = summaryOf(runIdIn(run.stderr));
    expect(summary.cost).toEqual({
      estimated_usd: 0.52,
      estimate_lower_bound: false,
      committed_usd: charged,
      failed_usd: 0,
      unknown_usd: 0,
      unpriced_submissions: 0,
      by_step: { hero: 0.18, branded: 0.04, clip: 0.3 },
    });
    expect(run.stderr).toMatch(/✓ run \S+ succeeded in [\d.]+s, spent \$0\.5200 of an estimated \$0\.5200/);
    const report = readFileSync(join(home, 'runs', runIdIn(run.stderr), 'report.html'), 'utf8');
    expect(report).toContain('<td data-total="spent">$0.5200 of an estimated $0.5200</td>');
  });

  it('charges batch-thumbnails exactly its estimate, and runs list shows the spend', async () => {
    const before = (await gateway.stats()).balances.local!;
    const args = ['run', join(recipes, 'batch-thumbnails.yaml'), '--batch', join(recipes, 'data', 'thumbnails.csv')];
    // Off a terminal nothing is asked, even over --confirm-above.
    const run = await pipeline([...args, '--confirm-above', '0'], envFor(gateway), gateway);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(usd(before - (await gateway.stats()).balances.local!)).toBe(0.18);
    const runId = runIdIn(run.stderr);
    const list = await pipeline(['runs', 'list', '--json']);
    const listed = JSON.parse(list.stdout).find((r: { run_id: string }) => r.run_id === runId);
    expect(listed.spent_usd).toBe(0.18);
  });

  // `script` (util-linux, in every Debian) gives the run a terminal, and types the answer into it.
  const hasScript = existsSync('/usr/bin/script');
  it.skipIf(!hasScript && !process.env.CI)(
    'on a terminal, asks before a run over --confirm-above; no means nothing sent',
    async () => {
      // A process on a terminal runs on real time: a gateway of its own on real time too.
      const realTime = await serve({ realTime: true });
      const submissions = async () => (await realTime.stats()).requests.by_route[SUBMIT] ?? 0;
      const before = await submissions();
      const { CI: _ci, ...env } = envFor(realTime);
      const command = `node ${cli} run ${join(recipes, 'batch-thumbnails.yaml')} --set title=x --confirm-above 0.01`;
      const terminal = (answer: string) =>
        execa('script', ['-qec', command, '/dev/null'], { reject: false, input: answer, env, cwd: home });
      const declined = await terminal('n\n');
      expect(declined.exitCode).toBe(2);
      expect(declined.stdout).toContain("This run's estimate: $0.0300. The balance is $");
      expect(declined.stdout).toContain('not started; nothing was sent');
      expect(await submissions()).toBe(before);
      const accepted = await terminal('y\n');
      expect(accepted.exitCode, accepted.stdout).toBe(0);
      expect(await submissions()).toBe(before + 1);
      await stop(realTime);
    },
  );

  it('counts a fallback whose if may not hold in --max-cost in full, and says the estimate is at most', async () => {
    const recipe = join(home, 'fallback.yaml');
    await writeFile(
      recipe,
      lines(
        'version: 1',
        'name: fallback',
        'steps:',
        `  t2i: { uses: ${T2I}, for_each: [red, green, blue], continue_on_error: true, with: { prompt: "a \${{ item }} kite" } }`,
        '  fallback:',
        '    uses: vendor-b/vendor-b-5.0-lite-edit',
        '    for_each: ${{ steps.t2i.outputs }}',
        "    if: ${{ steps.t2i.outcome == 'failure' }}",
        `    with: { prompt: plain, image: [${join(recipes, 'assets', 'logo.png')}] }`,
      ),
    );
    const before = await gateway.stats();
    // $0.09 of pictures for sure, and up to $0.12 of fallbacks.
    const over = await pipeline(['run', recipe, '--max-cost', '0.08', '--no-cache'], envFor(gateway), gateway);
    expect(over.exitCode).toBe(2);
    expect(over.stderr).toContain(
      'the estimated cost at most $0.2100 is over --max-cost $0.0800 (an upper bound: fallback runs only where its if holds, counted here as if it always did, up to $0.1200); nothing was sent',
    );
    expect((await gateway.stats()).requests.by_route[SUBMIT]).toBe(before.requests.by_route[SUBMIT]);
    // Refused while the fallbacks could pass the cap, though they seldom run: a run cut off at the
    // cap would have paid for work it cannot finish.
    const between = await pipeline(['run', recipe, '--max-cost', '0.10', '--no-cache'], envFor(gateway), gateway);
    expect(between.exitCode).toBe(2);
    expect(between.stderr).toContain('is over --max-cost $0.1000 (an upper bound');
    const under = await pipeline(['run', recipe, '--max-cost', '0.25', '--no-cache'], envFor(gateway), gateway);
    expect(under.exitCode, under.stderr).toBe(0);
    expect(under.stderr).toMatch(/spent \$0\.0900 of an estimated \$0\.2100/);
  });

  it('prices a resolution an LLM chooses at the dearest the model allows, so --max-cost refuses before anything is paid', async () => {
    const recipe = join(home, 'chosen.yaml');
    await writeFile(
      recipe,
      lines(
        'version: 1',
        'name: chosen',
        'steps:',
        '  pick:',
        '    uses: llm',
        '    with:',
        '      model: vendor-x/writer-1',
        '      prompt: Choose a resolution',
        '      schema: { type: object, required: [res], properties: { res: { type: string, enum: [1k, 2k] } } }',
        `  hero: { uses: ${T2I}, for_each: [a, b, c], with: { prompt: "\${{ item }}", resolution: "\${{ steps.pick.outputs.json.res }}" } }`,
      ),
    );
    const before = await gateway.stats();
    // Three 1K images cost $0.09, three 2K $0.18: a cap of $0.10 was passed at the default and cut
    // the run off midway whenever the answer was 2k.
    const over = await pipeline(['run', recipe, '--max-cost', '0.10', '--no-cache'], envFor(gateway), gateway);
    expect(over.exitCode).toBe(2);
    expect(over.stderr).toContain(
      'the estimated cost at most $0.1800 is over --max-cost $0.1000 (an upper bound: hero.resolution is known only at run time, priced at the dearest value the model allows); nothing was sent',
    );
    const after = await gateway.stats();
    expect(after.requests.by_route[SUBMIT]).toBe(before.requests.by_route[SUBMIT]);
    expect(after.requests.by_route['POST /v1/chat/completions'] ?? 0).toBe(
      before.requests.by_route['POST /v1/chat/completions'] ?? 0,
    );
    const plan = JSON.parse((await pipeline(['plan', recipe, '--format', 'json'])).stdout);
    expect(plan.steps.find((step: { id: string }) => step.id === 'hero').cost).toMatchObject({
      usd: 0.18,
      priced_at_most: ['resolution'],
    });
  });

  it('sends nothing when --max-cost is below the estimate, and names both', async () => {
    const before = await gateway.stats();
    const args = ['run', join(recipes, 'batch-thumbnails.yaml'), '--batch', join(recipes, 'data', 'thumbnails.csv')];
    // Without the step cache, which holds these six pictures since the test above.
    const run = await pipeline([...args, '--max-cost', '0.17', '--no-cache'], envFor(gateway), gateway);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('the estimated cost $0.1800 is over --max-cost $0.1700; nothing was sent');
    const recipe = join(home, 'capped.yaml');
    await writeFile(
      recipe,
      lines(
        'version: 1',
        'name: capped',
        'settings: { max_cost: 0.02 }',
        'steps:',
        '  a:',
        `    uses: ${T2I}`,
        '    with: { prompt: x }',
      ),
    );
    const capped = await pipeline(['run', recipe, '--no-cache'], envFor(gateway), gateway);
    expect(capped.exitCode).toBe(2);
    expect(capped.stderr).toContain(
      `the estimated cost $0.0300 is over settings.max_cost of ${recipe} $0.0200; nothing was sent`,
    );
    expect(sum((await gateway.stats()).requests.by_team)).toBe(sum(before.requests.by_team));
  });

  it('counts runs the step cache holds as costing nothing, in plan and in the run', async () => {
    const args = [join(recipes, 'batch-thumbnails.yaml'), '--batch', join(recipes, 'data', 'thumbnails.csv')];
    const plan = JSON.parse((await pipeline(['plan', ...args, '--format', 'json'], envFor(gateway), gateway)).stdout);
    expect(plan.steps[0].cost).toEqual({ usd: 0, per_run_usd: 0.03, dynamic: false, cached_runs: 6 });
    expect(plan.totals.cost.usd).toBe(0);
    const before = await gateway.stats();
    // A cap of nothing is enough: every run comes from the cache.
    const run = await pipeline(['run', ...args, '--max-cost', '0'], envFor(gateway), gateway);
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await gateway.stats()).balances.local).toBe(before.balances.local);
    expect(run.stderr).toMatch(/succeeded in [\d.]+s, spent \$0\.0000 of an estimated \$0\.0000/);
  });

  it('account --recipe shows the balance and how many runs of the recipe it pays for', async () => {
    const balance = (await gateway.stats()).balances.local!;
    const args = [
      'account',
      '--recipe',
      join(recipes, 'batch-thumbnails.yaml'),
      '--batch',
      join(recipes, 'data', 'thumbnails.csv'),
    ];
    const account = await pipeline([...args, '--json'], envFor(gateway), gateway);
    expect(account.exitCode, account.stderr).toBe(0);
    const answer = JSON.parse(account.stdout);
    expect(answer.balance_usd).toBe(balance);
    expect(answer.recipe.runs_paid).toBe(Math.floor(Math.round(balance * 10_000) / 1800));
    const text = await pipeline(args, envFor(gateway), gateway);
    expect(text.stdout).toMatch(
      new RegExp(`costs \\$0\\.1800 a run of the batch: the balance pays for ${answer.recipe.runs_paid} runs`),
    );
  });

  it('stops a dynamic fan-out exactly at the cap, and resume --max-cost with a higher cap goes on', async () => {
    const recipe = join(home, 'dynamic.yaml');
    await writeFile(recipe, DYNAMIC);
    const before = await gateway.stats();
    const run = await pipeline(['run', recipe, '--max-cost', '0.1'], envFor(gateway), gateway);
    // Stopped for money: its own exit code, never 0 nor the 1 of a failure.
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(/✗ run \S+ stopped/);
    const runId = runIdIn(run.stderr);
    const after = await gateway.stats();
    // $0.10 pays for three pictures at $0.03; the fourth would pass the cap, so it and the fifth are not sent.
    expect(after.tasks.submitted[T2I]! - (before.tasks.submitted[T2I] ?? 0)).toBe(3);
    expect(after.requests.by_route[SUBMIT]! - (before.requests.by_route[SUBMIT] ?? 0)).toBe(3);
    expect(usd(before.balances.local! - after.balances.local!)).toBe(0.09);
    const summary = summaryOf(runId);
    expect(summary.status).toBe('stopped');
    expect(summary.cost.committed_usd).toBe(0.09);
    expect(summary.steps.find((s: { step: string }) => s.step === 'image').error.reason).toBe('spend-cap');
    expect(run.stderr).toContain(`pipeline resume ${runId} --max-cost USD`);
    // A step failure of spend-cap is not retried: one attempt, no "retrying" note.
    expect(run.stderr).not.toMatch(/retrying/);

    const resumed = await pipeline(['resume', runId, '--max-cost', '0.15'], envFor(gateway), gateway);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const end = await gateway.stats();
    expect(end.tasks.submitted[T2I]! - (before.tasks.submitted[T2I] ?? 0)).toBe(5);
    expect(usd(before.balances.local! - end.balances.local!)).toBe(0.15);
    expect(summaryOf(runId).cost.committed_usd).toBe(0.15);
  });

  it('after a cap stop, names the steps whose outcome is unknown: the resume it gives leaves them failed', async () => {
    const recipe = join(home, 'dynamic-unknown.yaml');
    await writeFile(
      recipe,
      DYNAMIC.replace(
        '  image:',
        `  lone: { uses: ${T2I}, with: { prompt: a lone kite }, retry: { attempts: 0 } }\n  image:`,
      ),
    );
    // The gateway takes the lone kite's submission, and the answer is lost on the way back.
    gateway.local.injectFault({ kind: 'drop-after', route: SUBMIT, body_contains: 'a lone kite' });
    const run = await pipeline(['run', recipe, '--max-cost', '0.1', '--no-cache'], envFor(gateway), gateway);
    expect(run.exitCode).toBe(3);
    const runId = runIdIn(run.stderr);
    expect(run.stderr).toContain(`pipeline resume ${runId} --no-cache --max-cost USD`);
    expect(run.stderr).toContain(
      "lone ended with an outcome unknown (a submission whose answer was lost): that resume leaves it failed. Check the team's tasks and balance, and add --resubmit-unknown to send them again",
    );
    // What the cap counted, with the part the gateway may not have charged said apart.
    expect(run.stderr).toContain(
      'spent $0.0900 of an estimated at least $0.0300 ($0.0300 on submissions whose outcome is unknown, charged only if the gateway took them)',
    );
    expect(summaryOf(runId).cost).toMatchObject({ committed_usd: 0.09, unknown_usd: 0.03, failed_usd: 0 });
    const shown = await pipeline(['runs', 'show', runId], envFor(gateway), gateway);
    expect(shown.stdout).toMatch(/^lone failed \(outcome-unknown\): /m);
  });

  it('is never green when the cap stops items, whatever continue_on_error says', async () => {
    const recipe = join(home, 'tolerant-dynamic.yaml');
    await writeFile(recipe, DYNAMIC.replace('    for_each:', '    continue_on_error: true\n    for_each:'));
    const run = await pipeline(['run', recipe, '--max-cost', '0.1', '--json', '--no-cache'], envFor(gateway), gateway);
    expect(run.exitCode).toBe(3);
    expect(JSON.parse(run.stdout).status).toBe('stopped');
  });
});

describe('pipeline run against a gateway with $0.10', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await serve({ balanceUsd: 0.1 });
  });
  afterAll(async () => stop(gateway));

  it('refuses an estimate over the balance unless --yes; nothing sent after a 402; resumes on a recharge', async () => {
    const recipe = join(home, 'five.yaml');
    await writeFile(recipe, FIVE);
    const refused = await pipeline(['run', recipe], envFor(gateway), gateway);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("the estimated cost $0.1500 is over the team's balance $0.1000");
    expect((await gateway.stats()).requests.by_route[SUBMIT]).toBeUndefined();

    const run = await pipeline(['run', recipe, '--yes'], envFor(gateway), gateway);
    expect(run.exitCode).toBe(3);
    const runId = runIdIn(run.stderr);
    expect(run.stderr).toContain(`Recharge, then:\n  npx media-pipeline resume ${runId}\n`);
    const stats = await gateway.stats();
    // Three pictures paid, the fourth answered 402, and the fifth never sent.
    expect(stats.tasks.submitted[T2I]).toBe(3);
    expect(stats.requests.by_route[SUBMIT]).toBe(4);
    expect(stats.requests.by_status['402']).toBe(1);
    const events = readJournal(join(home, 'runs', runId, 'journal.jsonl'));
    expect(events.filter((e) => e.type === 'item-finished')).toHaveLength(3);
    expect(summaryOf(runId).cost.committed_usd).toBe(0.09);

    const recharge = await fetch(`${gateway.urls.schema_url}/__emulator/balance`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ team: 'local', balance: 1 }),
    });
    expect(recharge.status).toBe(200);
    const resumed = await pipeline(['resume', runId, '--json'], envFor(gateway), gateway);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).files).toHaveLength(5);
    const end = await gateway.stats();
    // Only the two pictures never paid for were submitted: no task paid twice.
    expect(end.tasks.submitted[T2I]).toBe(5);
    expect(usd(1 - end.balances.local!)).toBe(0.06);
    const taskIds = readJournal(join(home, 'runs', runId, 'journal.jsonl')).flatMap((e) =>
      e.type === 'task-submitted' ? [e.task_id] : [],
    );
    expect(new Set(taskIds).size).toBe(5);
    expect(summaryOf(runId).cost.committed_usd).toBe(0.15);
  });
});
