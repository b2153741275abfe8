import { describe, expect, it } from 'vitest';
import { reportData } from '../../src/report/data.js';
import { renderPage } from '../../src/report/page.js';
import type { JournalEvent } from '../../src/store/journal.js';

const t0 = Date.UTC(2026, 0, 1);

const submitted = (step: string, index: number, input: Record<string, unknown>): JournalEvent => ({
  type: 'task-submitted',
  t: t0 + 10,
  row: 0,
  step,
  index,
  slug: 'v/m',
  request: `req-${step}-${index}`,
  task_id: `task_${step}_${index}`,
  input,
});

/** The report page of a run of model steps `steps` (one row, or `rows`), from the journal lines after its start. */
function pageOf(steps: string[], events: JournalEvent[], rows = 1): string {
  const data = reportData({
    events: [
      {
        type: 'run-started',
        t: t0,
        run_id: 'r1',
        recipe: '/r.yaml',
        name: 'r',
        rows: Array.from({ length: rows }, () => ({})),
        sets: [],
        batch: rows > 1 ? 'rows.csv' : null,
        dag: steps.map((id) => ({ id, action: 'model', depends_on: [], model: 'v/m' })),
      },
      ...events,
    ],
    damagedLines: [],
  });
  if (!data.ok) throw new Error(data.error.message);
  return renderPage(data.value, { dir: '/tmp', thumbs: new Map() });
}

describe("a report card's prompt", () => {
  it('shows the prompt with the whole input folded, and an input without a prompt folded alone', () => {
    const page = pageOf(
      ['clip'],
      [
        { type: 'step-started', t: t0, row: 0, step: 'clip' },
        submitted('clip', 0, { prompt: 'restyle the ride', duration: 5 }),
        submitted('clip', 1, { video_urls: ['https://x/ride.mp4'], duration: 5 }),
      ],
    );
    const prompts = [...page.matchAll(/<div class="prompt">([^<]*)<\/div>/g)].map((m) => m[1]);
    expect(prompts).toEqual(['restyle the ride']);
    expect(page.match(/<summary>input<\/summary>/g)).toHaveLength(2);
    expect(page).toContain('https://x/ride.mp4');
  });
});

describe('a section of steps that flow item by item', () => {
  it('names a fork by its paths and puts each branch whole, side by side', () => {
    const step = (id: string, from?: string): JournalEvent[] => [
      { type: 'step-started', t: t0, row: 0, step: id, ...(from ? { items_from: from } : {}) },
      submitted(id, 0, { prompt: id }),
    ];
    const page = pageOf(
      ['t2i', 'edit', 'fallback', 'video'],
      // In the recipe's order: fallback, from t2i, comes before video, from edit.
      [...step('t2i'), ...step('edit', 't2i'), ...step('fallback', 't2i'), ...step('video', 'edit')],
    );
    expect(page).toMatch(/<h2>t2i → edit → video, t2i → fallback<span/);
    expect(page).toContain('data-steps="t2i edit video fallback"');
  });
});

describe('a batch', () => {
  it('is one section, a row a line and a step a column, in the recipe’s order', () => {
    const rowEvents = (row: number, product: string): JournalEvent[] => [
      { type: 'step-started', t: t0, row, step: 'shot' },
      { ...(submitted('shot', 0, { prompt: `a photo of ${product}` }) as object), row } as JournalEvent,
      { type: 'step-started', t: t0, row, step: 'clip' },
      { ...(submitted('clip', 0, { prompt: `a clip of ${product}` }) as object), row } as JournalEvent,
    ];
    const page = pageOf(['shot', 'clip'], [...rowEvents(1, 'a lamp'), ...rowEvents(0, 'a kettle')], 2);
    expect(page.match(/<section class="step/g)).toHaveLength(1);
    expect(page).toContain('data-steps="shot clip"');
    // Row 1 first, its shot before its clip; then row 2.
    const lines = [
      ...page.matchAll(/<div class="chain-row" data-row="(\d)"[\s\S]*?(?=<div class="chain-row"|<\/section>)/g),
    ];
    expect(lines.map((m) => m[1])).toEqual(['1', '2']);
    const prompts = (line: string) => [...line.matchAll(/<div class="prompt">([^<]*)<\/div>/g)].map((m) => m[1]);
    expect(prompts(lines[0]![0])).toEqual(['a photo of a kettle', 'a clip of a kettle']);
    expect(prompts(lines[1]![0])).toEqual(['a photo of a lamp', 'a clip of a lamp']);
  });
});
