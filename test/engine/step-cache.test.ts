import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CacheStore } from '../../src/cache/store.js';
import { systemClock } from '../../src/clock.js';
import { runPlan } from '../../src/engine/engine.js';
import { RunCache } from '../../src/engine/run-cache.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { reportData } from '../../src/report/data.js';
import { renderPage } from '../../src/report/page.js';
import type { JournalEvent } from '../../src/store/journal.js';
import { engineFor } from '../support/engine.js';

const SEARCH = 'POST /tools/v1/web-search';
const TEXT = 'POST /llm/v1/chat/completions';
const HOUR = 3_600_000;

let gateway: LocalGateway;
let dir: string;
/** The store's clock: only the cache's notion of age moves, by hand. */
let now: number;

beforeAll(async () => {
  gateway = await startLocalGateway({ latencyScale: 0, seed: 5 });
});
afterAll(() => gateway.close());
beforeEach(async (context) => {
  dir = await mkdtemp(join(tmpdir(), 'step-cache-'));
  now = Date.UTC(2026, 10, 22);
  context.onTestFinished(() => rm(dir, { recursive: true, force: true }));
});

/** One run of `recipe` with the step cache in `dir`: the gateway calls made, and the items taken from the cache. */
async function run(recipe: string, sets: string[] = [], mode = { read: true, write: true }) {
  const store = CacheStore.open(join(dir, 'cache'), { now: () => now, warn: () => {} });
  if (!store.ok) throw new Error(store.error);
  const engine = await engineFor(recipe, gateway, systemClock, { sets });
  engine.ctx.cache = new RunCache(store.value, mode, () => {}, gateway.baseUrl);
  const before = gateway.stats().requests.by_route;
  const result = await runPlan(engine.ctx);
  const after = gateway.stats().requests.by_route;
  const events = engine.events();
  const cached = events.flatMap((e) => (e.type === 'item-cached' ? [e.step] : [])).sort();
  const cachedItems = events.flatMap((e) => (e.type === 'item-cached' ? [`${e.step}[${e.index}]`] : [])).sort();
  const submitted = events.flatMap((e) => (e.type === 'task-submitted' ? [`${e.step}[${e.index}]`] : [])).sort();
  await engine.close();
  expect(result.status).toBe('succeeded');
  const made = (route: string) => (after[route] ?? 0) - (before[route] ?? 0);
  return {
    search: made(SEARCH),
    text: made(TEXT),
    cached,
    cachedItems,
    submitted,
    outputs: result.rows[0]!.outputs,
    events,
  };
}

const RECIPE = `version: 1
name: ttl
steps:
  news: { uses: web-search, with: { query: "bike lanes" } }
  words: { uses: llm, with: { model: openai/gpt-test, prompt: "Name a colour" } }
  short: { uses: llm, with: { model: openai/gpt-test, prompt: "Name a fruit" }, cache: { ttl: 1h } }
outputs:
  words: \${{ steps.words.outputs.text }}
`;

/** A chain per item: each edit follows its own image. */
const CHAIN = `version: 1
name: chain
inputs:
  colours: { type: array, default: [red, green, blue] }
steps:
  image:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} background" }
  edit:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.image.outputs[*].images[0].url }}
    with: { prompt: add a badge, image: ["\${{ item }}"], size: 1024x1024 }
`;

describe('the step cache in the engine', () => {
  it('serves each item of a chain from the cache, and reruns only the chain of a changed input item', async () => {
    expect((await run(CHAIN)).submitted).toHaveLength(6);
    const warm = await run(CHAIN);
    expect(warm.submitted).toEqual([]);
    expect(warm.cachedItems).toEqual(['edit[0]', 'edit[1]', 'edit[2]', 'image[0]', 'image[1]', 'image[2]']);
    const changed = await run(CHAIN, ['colours=["red","grey","blue"]']);
    expect(changed.submitted).toEqual(['edit[1]', 'image[1]']);
    expect(changed.cachedItems).toEqual(['edit[0]', 'edit[2]', 'image[0]', 'image[2]']);
  });

  it('shows on a cached card the prompt that made it, as on a card it ran, and the run that made it and when', async () => {
    await run(CHAIN);
    const madeAt = now;
    now += HOUR;
    // The command line journals the run's start; the engine alone does not.
    const start: JournalEvent = {
      type: 'run-started',
      t: now,
      run_id: 'r',
      recipe: 'chain.yaml',
      name: 'chain',
      rows: [{}],
      sets: [],
      batch: null,
    };
    const warm = reportData({ events: [start, ...(await run(CHAIN)).events], damagedLines: [] });
    if (!warm.ok) throw new Error(warm.error.message);
    const image = warm.value.steps.find((s) => s.step === 'image')!;
    expect(image.items.map((i) => [i.cached, i.input?.prompt])).toEqual([
      [true, 'a red background'],
      [true, 'a green background'],
      [true, 'a blue background'],
    ]);
    const edit = warm.value.steps.find((s) => s.step === 'edit')!;
    expect(edit.items.every((i) => i.cached && i.input?.prompt === 'add a badge')).toBe(true);
    // The engine's runs in these tests are all 'test-run'; the time tells the first run from this one.
    expect(image.items.map((i) => i.cachedFrom)).toEqual(Array(3).fill({ at: madeAt, run: 'test-run' }));
    const page = renderPage(warm.value, { dir, thumbs: new Map() });
    expect(page).toContain('from the cache of run test-run (2026-11-22 00:00:00 UTC)');
  });

  it('keeps web-search results 24 hours, llm answers with no expiry, and honours a step ttl', async () => {
    expect(await run(RECIPE)).toMatchObject({ search: 1, text: 2, cached: [] });
    now += 59 * 60_000;
    expect(await run(RECIPE)).toMatchObject({ search: 0, text: 0, cached: ['news', 'short', 'words'] });
    now += 2 * 60_000;
    // Past an hour: the step with ttl 1h runs again (and is stored again).
    expect(await run(RECIPE)).toMatchObject({ search: 0, text: 1, cached: ['news', 'words'] });
    now += 24 * HOUR;
    expect(await run(RECIPE)).toMatchObject({ search: 1, text: 1, cached: ['words'] });
  });

  it('gives the same outputs from the cache as from the run that stored them', async () => {
    const first = await run(RECIPE);
    const second = await run(RECIPE);
    expect(second.cached).toContain('words');
    expect(second.outputs).toEqual(first.outputs);
  });

  it('reruns a run step unless it says cache: true, and a step whose cache.key changed', async () => {
    const recipe = `version: 1
name: commands
inputs:
  version: { type: string, default: "1" }
steps:
  always: { run: "echo always" }
  kept: { run: "echo kept", cache: true }
  keyed:
    uses: llm
    with: { model: openai/gpt-test, prompt: "Name a tree" }
    cache: { key: "\${{ inputs.version }}" }
`;
    await run(recipe);
    expect((await run(recipe)).cached).toEqual(['kept', 'keyed']);
    const bumped = await run(recipe, ['version=2']);
    expect(bumped).toMatchObject({ text: 1, cached: ['kept'] });
  });

  it('with reading off (--refresh) runs everything and stores it for the next run', async () => {
    await run(RECIPE);
    expect(await run(RECIPE, [], { read: false, write: true })).toMatchObject({ search: 1, text: 2, cached: [] });
    now += 2 * HOUR;
    // The refresh stored fresh entries: only the 1h step has expired since.
    expect(await run(RECIPE)).toMatchObject({ search: 0, text: 1 });
  });
});
