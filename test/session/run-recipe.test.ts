import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RecipeRunOptions, runRecipe } from '../../src/index.js';
import { type LocalGateway, startLocalGateway } from '../../src/local-gateway/index.js';
import { skippingTime } from '../support/cli.js';
import { endpointsOf } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';
import { summariseJournalFile } from '../../src/store/summary.js';
import { IMAGE_SLUG } from '../support/recipes.js';

// Two pictures of one title, and the title's first picture as the recipe's output.
const RECIPE = `version: 1
name: library-poster
inputs:
  title: { type: string }
steps:
  poster:
    uses: ${IMAGE_SLUG}
    for_each: ["dawn", "dusk"]
    with: { prompt: "\${{ inputs.title }} at \${{ item }}", aspect_ratio: "1:1" }
outputs:
  first: \${{ steps.poster.outputs[0].images[0] }}
`;

let dir: string;
let clock: ManualClock;
let gateway: LocalGateway;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pipeline-library-'));
  clock = new ManualClock();
  gateway = await startLocalGateway({ clock, seed: 7 });
});
afterEach(async () => {
  await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the library API the way a Node script would, on the test's clock and the loopback gateway. */
function run(options: Partial<RecipeRunOptions> & { recipe: string }) {
  // A run does work no check sees (files, the report's thumbnails): the command line's generous bounds.
  return skippingTime(
    clock,
    gateway,
    runRecipe({
      cwd: dir,
      env: {},
      clock,
      gateway: { ...endpointsOf(gateway), apiKey: gateway.apiKey },
      warn: () => {},
      ...options,
    }),
  );
}

const totalRequests = () => gateway.stats().requests.total;

describe('runRecipe, the library API', () => {
  it('runs a recipe against a gateway and answers the run: id, status, outputs, items and spend, with its journal', async () => {
    await writeFile(join(dir, 'poster.yaml'), RECIPE);
    const answer = await run({ recipe: 'poster.yaml', set: ['title=Harbour'] });
    if (!answer.ok) throw new Error(`the run did not start: ${answer.error.message}`);
    const outcome = answer.value;

    expect(outcome.status).toBe('succeeded');
    expect(outcome.runId).toMatch(/-library-poster-[0-9a-f]{4}$/);
    expect(outcome.runDir).toBe(join(dir, '.pipeline', 'runs', outcome.runId));
    const first = outcome.outputs[0]?.first as { path?: string; url?: string };
    expect(first.path && existsSync(first.path)).toBe(true);
    expect(outcome.items.map((s) => [s.step, s.status, s.tasks.length])).toEqual([['poster', 'succeeded', 2]]);
    expect(outcome.files).toHaveLength(2);
    // Two submissions at the bundled price: committed is the estimate, to the cent.
    expect(outcome.spend.committed_usd).toBeGreaterThan(0);
    expect(outcome.spend.committed_usd).toBeCloseTo(outcome.spend.estimated_usd ?? -1, 6);
    expect(outcome.reportPath && existsSync(outcome.reportPath)).toBe(true);

    const journal = (await readFile(join(outcome.runDir, 'journal.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; sets?: string[]; status?: string });
    expect(journal[0]).toMatchObject({ type: 'run-started', sets: ['title=Harbour'] });
    expect(journal.filter((e) => e.type === 'task-submitted')).toHaveLength(2);
    expect(journal.at(-1)).toMatchObject({ type: 'run-finished', status: 'succeeded' });
    expect(JSON.parse(await readFile(join(outcome.runDir, 'run.json'), 'utf8'))).toMatchObject({
      run_id: outcome.runId,
      status: 'succeeded',
    });
    // The key never reaches the journal.
    expect(JSON.stringify(journal)).not.toContain(gateway.apiKey);
  });

  it('ends a batch of a recipe without outputs with no list of empty outputs in its journal, and {} a row in run.json', async () => {
    await writeFile(join(dir, 'poster.yaml'), RECIPE.slice(0, RECIPE.indexOf('outputs:')));
    await writeFile(join(dir, 'titles.csv'), 'title\nHarbour\nMeadow\nQuarry\n');
    const answer = await run({ recipe: 'poster.yaml', batch: 'titles.csv' });
    if (!answer.ok) throw new Error(`the run did not start: ${answer.error.message}`);
    const outcome = answer.value;
    expect(outcome.status).toBe('succeeded');
    expect(outcome.outputs).toEqual([{}, {}, {}]);
    const lines = (await readFile(join(outcome.runDir, 'journal.jsonl'), 'utf8')).trim().split('\n');
    const finished = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    expect(finished).toMatchObject({ type: 'run-finished', status: 'succeeded' });
    expect(finished).not.toHaveProperty('outputs');
    const summary = JSON.parse(await readFile(join(outcome.runDir, 'run.json'), 'utf8'));
    expect(summary.outputs).toEqual([{}, {}, {}]);
    // run.json is folded from the lines as they were written: the summary of the file read again.
    const { cache, ...folded } = summary;
    const reread = summariseJournalFile(join(outcome.runDir, 'journal.jsonl'));
    if (!reread.ok) throw new Error(reread.error.message);
    expect(folded).toEqual(JSON.parse(JSON.stringify(reread.value)));
    expect(cache).toMatchObject({ enabled: true });
  });

  it('answers a bad recipe as a located error value: no throw, no run folder, nothing sent', async () => {
    await writeFile(
      join(dir, 'poster.yaml'),
      RECIPE.replace('aspect_ratio: "1:1"', 'aspect_ratio: "1:1", colour: red'),
    );
    const before = totalRequests();
    const answer = await run({ recipe: 'poster.yaml', set: ['title=Harbour'] });

    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.error.kind).toBe('invalid-recipe');
    expect(answer.error.message).toBe('1 error in poster.yaml; nothing was run');
    if (answer.error.kind !== 'invalid-recipe') return;
    expect(answer.error.problems).toHaveLength(1);
    expect(answer.error.problems[0]).toMatchObject({ severity: 'error', file: 'poster.yaml', line: 9 });
    expect(answer.error.problems[0]!.message).toContain('colour');
    expect(answer.error.text).toMatch(/^poster\.yaml:9:\d+: error: /);
    expect(totalRequests()).toBe(before);
    expect(existsSync(join(dir, '.pipeline', 'runs'))).toBe(false);
  });

  it('answers a missing input and a bad option as values, naming them, with nothing sent', async () => {
    await writeFile(join(dir, 'poster.yaml'), RECIPE);
    const before = totalRequests();
    const missing = await run({ recipe: 'poster.yaml' });
    expect(missing).toMatchObject({ ok: false, error: { kind: 'invalid-recipe' } });
    if (!missing.ok && missing.error.kind === 'invalid-recipe')
      expect(missing.error.problems[0]!.message).toContain('title');

    const option = await run({ recipe: 'poster.yaml', set: ['title=Harbour'], concurrency: 0 });
    expect(option).toEqual({
      ok: false,
      error: { kind: 'usage', message: 'concurrency must be a whole number of at least 1, got 0' },
    });
    const queue = await run({ recipe: 'poster.yaml', set: ['title=Harbour'], queueAhead: 1.5 });
    expect(queue).toEqual({
      ok: false,
      error: { kind: 'usage', message: 'queueAhead must be a whole number of at least 0, got 1.5' },
    });
    const unreadable = await run({ recipe: 'nowhere.yaml' });
    expect(unreadable).toEqual({ ok: false, error: { kind: 'usage', message: 'cannot read the recipe nowhere.yaml' } });
    expect(totalRequests()).toBe(before);
  });
});

describe('the package entry', () => {
  it("exports runRecipe from the built package under its own name, with its types (package.json's exports)", async () => {
    const entry = await import('media-pipeline');
    expect(typeof entry.runRecipe).toBe('function');
    expect(typeof entry.resumeRecipe).toBe('function');
    const manifest = JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(existsSync(join(import.meta.dirname, '..', '..', 'dist', 'index.d.ts'))).toBe(true);
  });
});
