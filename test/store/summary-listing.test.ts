import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../src/store/journal.js';
import { reportData, reportDataOfFile } from '../../src/report/data.js';
import { foldJournalFile } from '../../src/store/fold.js';
import { replayJournal, replayJournalFile } from '../../src/store/replay.js';
import { renderPage } from '../../src/report/page.js';
import { LISTED_ROWS, notListedLine, summariseJournal, summariseJournalFile } from '../../src/store/summary.js';
import { batchJournal } from '../support/batch-journal.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'summary-listing-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function journalFile(events: JournalEvent[]): Promise<string> {
  const path = join(dir, `journal-${events.length}.jsonl`);
  await writeFile(path, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  return path;
}

describe('the summary of a journal read as it is folded', () => {
  it('is the summary of the whole journal read at once, for a batch of no more rows than are listed', async () => {
    const events = batchJournal(LISTED_ROWS);
    const streamed = summariseJournalFile(await journalFile(events));
    const whole = summariseJournal({ events, damagedLines: [] });
    expect(streamed.ok && whole.ok).toBe(true);
    if (!streamed.ok || !whole.ok) return;
    expect(streamed.value).toEqual(whole.value);
    expect(streamed.value.not_listed).toBeUndefined();
  });

  it('lists every step of the first rows and the failed ones after them, and counts the rest', async () => {
    const rows = LISTED_ROWS + 500;
    const summary = summariseJournalFile(await journalFile(batchJournal(rows)));
    expect(summary.ok).toBe(true);
    if (!summary.ok) return;
    const { value } = summary;
    expect(value.rows).toBe(rows);
    expect(value.steps).toHaveLength(LISTED_ROWS + 1);
    expect(value.steps.at(-1)).toMatchObject({ row: 1_100, status: 'failed', error: { message: 'no' } });
    expect(value.files).toHaveLength(LISTED_ROWS);
    expect(value.not_listed).toEqual({ steps: 499, tasks: 499, files: 499, bytes: 4_990 });
    // Every submission counts, listed or not: the spend is not a listing.
    expect(value.cost.committed_usd).toBeCloseTo(rows * 0.03, 6);
    expect(notListedLine(value)).toBe(
      '… and 499 more steps that succeeded and 499 more files (4,990 bytes) in rows past the first 1,000: see the journal',
    );
  });

  it('reads a damaged line and a last line without its newline as the whole-file reader does', async () => {
    const events = batchJournal(3);
    const lines = events.map((e) => JSON.stringify(e));
    lines.splice(2, 0, '{"t":1,"type":"step-sta');
    const path = join(dir, 'damaged.jsonl');
    await writeFile(path, lines.join('\n'));
    const summary = summariseJournalFile(path);
    expect(summary.ok && summary.value.damaged_lines).toEqual([3]);
    expect(summary.ok && summary.value.status).toBe('failed');
  });
});

describe('the report of a journal read as it is folded', () => {
  it("is the whole journal's report for a batch of no more rows than are listed", async () => {
    const events = batchJournal(LISTED_ROWS);
    const streamed = reportDataOfFile(await journalFile(events));
    const whole = reportData({ events, damagedLines: [] });
    expect(streamed.ok && whole.ok).toBe(true);
    if (streamed.ok && whole.ok) expect(streamed.value).toEqual(whole.value);
  });

  it("shows the first rows' items and the failed steps after them, counts the rest, and totals them all", async () => {
    const rows = LISTED_ROWS + 500;
    const events = batchJournal(rows);
    const data = reportDataOfFile(await journalFile(events));
    expect(data.ok).toBe(true);
    if (!data.ok) return;
    const { steps, totals, summary } = data.value;
    expect(steps).toHaveLength(LISTED_ROWS + 1);
    expect(steps.slice(0, LISTED_ROWS).every((s) => s.items.length === 1 && s.items[0]!.files.length === 1)).toBe(true);
    expect(steps.at(-1)).toMatchObject({ row: 1_100, status: 'failed', error: 'no' });
    // Every task and file of the run is counted, listed or not; so is every second of traffic.
    expect(totals).toMatchObject({ tasks: rows, files: rows - 1 });
    const page = renderPage(data.value, { dir, thumbs: new Map(), unthumbed: 0 });
    expect(page).toContain(`<p class="meta" id="not-listed">${notListedLine(summary)}</p>`);
    expect(page).not.toContain('row-1050-tile.png');
    expect(page).toContain('row-1000-tile.png');
  });
});

describe('the resume state of a journal read as it is folded', () => {
  it("is the whole journal's resume state, without the item records, file list and traffic only the report reads", async () => {
    const events = batchJournal(50);
    const path = await journalFile(events);
    const streamed = replayJournalFile(path);
    const whole = replayJournal({ events, damagedLines: [] });
    expect(streamed.ok && whole.ok).toBe(true);
    if (streamed.ok && whole.ok) expect(streamed.value).toEqual(whole.value);
    const { folded } = foldJournalFile(path, { forResume: true });
    expect(folded.ok).toBe(true);
    if (!folded.ok) return;
    expect(folded.value.items.size).toBe(0);
    expect(folded.value.files).toEqual([]);
    expect(folded.value.finishedSteps.size).toBe(50);
  });
});
