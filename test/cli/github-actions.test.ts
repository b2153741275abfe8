import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

let gateway: LocalGateway;
/** The gateway's and the commands' time: polls and task latencies take no real time. */
const clock = new ManualClock();
let work: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0.01, latencyJitter: 0, seed: 4 });
  work = await mkdtemp(join(tmpdir(), 'pipeline-gha-'));
  cpSync('recipes/ci-assets.yaml', join(work, 'recipes', 'ci-assets.yaml'));
  cpSync('recipes/assets', join(work, 'recipes', 'assets'), { recursive: true });
});
afterAll(async () => {
  await gateway.close();
  await rm(work, { recursive: true, force: true });
});

const summaryPath = () => join(work, 'summary.md');
const pipeline = (args: string[]) =>
  pipelineInProcess(args, {
    cwd: join(work, 'recipes'),
    clock,
    gateway,
    env: {
      PATH: process.env.PATH,
      PIPELINE_HOME: join(work, 'home'),
      PIPELINE_BASE_URL: gateway.baseUrl,
      PIPELINE_API_KEY: gateway.apiKey,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: work,
      GITHUB_STEP_SUMMARY: summaryPath(),
    },
  });

/** The Markdown tables in `text`: rows of cells. */
function tables(text: string): string[][][] {
  const found: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    if (!current) {
      current = [];
      found.push(current);
    }
    current.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return found;
}

describe('GitHub Actions output', () => {
  it('prints each diagnostic of an invalid recipe as ::error at its place, relative to the workspace', async () => {
    const broken = join(work, 'recipes', 'broken.yaml');
    writeFileSync(
      broken,
      'version: 1\nname: broken\nsteps:\n  a: { run: echo, cache: "yes, please" }\n  b: { run: echo, timeout: soon }\n',
    );
    for (const command of ['validate', 'plan', 'run']) {
      const result = await pipeline([command, 'broken.yaml']);
      expect(result.exitCode).toBe(2);
      const lines = result.stderr.split('\n').filter((l) => l.startsWith('::'));
      expect(lines).toEqual([
        '::error file=recipes/broken.yaml,line=4,col=26,endLine=4,endColumn=39,title=pipeline::steps.a.cache must be true, false, or a mapping such as { ttl: 7d, key: "${{ inputs.version }}" }',
        '::error file=recipes/broken.yaml,line=5,col=28,endLine=5,endColumn=32,title=pipeline::steps.b.timeout must be a duration such as 90s or 15m',
      ]);
    }
  });

  it('annotates a run refused over --max-cost, which sends nothing, as one error with its reason', async () => {
    const result = await pipeline(['run', 'ci-assets.yaml', '--max-cost', '0.01', '--no-cache']);
    expect(result.exitCode).toBe(2);
    const errors = result.stderr.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors).toEqual([
      expect.stringMatching(
        /^::error title=pipeline%3A not run::the estimated cost \$0\.\d+ is over --max-cost \$0\.0100; nothing was sent$/,
      ),
    ]);
  });

  it('annotates ten errors, then says how many more', async () => {
    const steps = Array.from({ length: 13 }, (_, n) => `  s${n}: { run: echo, timeout: soon }`).join('\n');
    writeFileSync(join(work, 'recipes', 'many.yaml'), `version: 1\nname: many\nsteps:\n${steps}\n`);
    const result = await pipeline(['validate', 'many.yaml']);
    expect(result.stderr.split('\n').filter((l) => l.startsWith('::error file=recipes/many.yaml,line='))).toHaveLength(
      10,
    );
    expect(result.stderr).toMatch(/^::notice title=3 more errors not annotated::/m);
  });

  it('appends a well-formed Markdown table of the steps to GITHUB_STEP_SUMMARY, run after run', async () => {
    for (let n = 0; n < 2; n++) {
      const result = await pipeline(['run', 'ci-assets.yaml']);
      expect(result.exitCode, result.stderr).toBe(0);
    }
    const text = readFileSync(summaryPath(), 'utf8');
    const found = tables(text);
    expect(found).toHaveLength(2);
    for (const table of found) {
      expect(table[0]).toEqual(['Step', 'Status', 'Ran', 'Cached', 'Failed', 'Skipped', 'Tasks', 'Requests', '429s']);
      expect(table[1]!.every((cell) => /^-+:?$/.test(cell))).toBe(true);
      expect(table.slice(2).map((row) => row.length)).toEqual([9, 9, 9]);
    }
    const byStep = (table: string[][]) => Object.fromEntries(table.slice(2).map((row) => [row[0], row.slice(1)]));
    // Cold: every background and the icon made, with their requests; warm: all from the cache.
    expect(byStep(found[0]!).backgrounds!.slice(0, 6)).toEqual(['succeeded', '3', '0', '0', '0', '3']);
    expect(Number(byStep(found[0]!).backgrounds![6])).toBeGreaterThanOrEqual(6);
    expect(byStep(found[1]!).backgrounds).toEqual(['succeeded', '0', '3', '0', '0', '0', '0', '0']);
    expect(byStep(found[1]!).icon!.slice(0, 3)).toEqual(['succeeded', '0', '1']);
    expect(text).toMatch(/^## ✅ ci-assets: succeeded in \d+\.\d s$/m);
    expect(text).toContain('- `icon.png`');
  });

  it("counts each batch row's requests to its own row, rows that waited for a task slot too", async () => {
    const recipe = join(work, 'recipes', 'rows.yaml');
    writeFileSync(
      recipe,
      [
        'version: 1',
        'name: rows',
        'inputs: { title: { type: string } }',
        'settings: { concurrency: 2 }',
        'steps:',
        '  thumbnail:',
        '    uses: vendor-a/vendor-a-v3-t2i',
        '    with: { prompt: "${{ inputs.title }}", aspect_ratio: "1:1" }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(work, 'recipes', 'rows.csv'), `title\n${['a', 'b', 'c', 'd', 'e', 'f'].join('\n')}\n`);
    writeFileSync(summaryPath(), '');
    const result = await pipeline(['run', 'rows.yaml', '--batch', 'rows.csv', '--no-cache']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [table] = tables(readFileSync(summaryPath(), 'utf8'));
    const rows = table!.slice(2);
    expect(rows).toHaveLength(6);
    // Four of the six waited for a slot that another row's task freed: a submission and a read each, still theirs.
    for (const row of rows) expect(Number(row[7]), row.join(' | ')).toBeGreaterThanOrEqual(2);
  });

  it('prints a failed step as ::error at its line in the recipe, and its message in the summary', async () => {
    writeFileSync(summaryPath(), '');
    gateway.injectFault({ kind: 'status', status: 402, route: 'POST /api/v1/{provider}/{model_id}', times: 1 });
    const result = await pipeline(['run', 'ci-assets.yaml', '--no-cache', '--set', 'palette=["teal"]']);
    // A 402 stops the run for money: exit 3.
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(
      /^::error file=recipes\/ci-assets\.yaml,line=14,col=3,title=pipeline%3A step backgrounds failed::/m,
    );
    expect(readFileSync(summaryPath(), 'utf8')).toMatch(/### Failures\n\n- \*\*backgrounds\*\*: /);
  });
});
