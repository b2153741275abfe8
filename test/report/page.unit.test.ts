import { describe, expect, it } from 'vitest';
import { reportData } from '../../src/report/data.js';
import { renderPage } from '../../src/report/page.js';
import type { JournalEvent } from '../../src/store/journal.js';

const t0 = Date.UTC(2026, 0, 1);
const submitted = (index: number, input: Record<string, unknown>): JournalEvent => ({
  type: 'task-submitted',
  t: t0 + 10,
  row: 0,
  step: 'clip',
  index,
  slug: 'v/video',
  request: `req-${index}`,
  task_id: `task_${index}`,
  input,
});

describe("a report card's prompt", () => {
  it('shows the prompt with the whole input folded, and an input without a prompt folded alone', () => {
    const data = reportData({
      events: [
        {
          type: 'run-started',
          t: t0,
          run_id: 'r1',
          recipe: '/r.yaml',
          name: 'r',
          rows: [{}],
          sets: [],
          batch: null,
          dag: [{ id: 'clip', action: 'model', depends_on: [], model: 'v/video' }],
        },
        { type: 'step-started', t: t0, row: 0, step: 'clip' },
        submitted(0, { prompt: 'restyle the ride', duration: 5 }),
        submitted(1, { video_urls: ['https://x/ride.mp4'], duration: 5 }),
      ],
      damagedLines: [],
    });
    if (!data.ok) throw new Error(data.error.message);
    const page = renderPage(data.value, { dir: '/tmp', thumbs: new Map() });
    const prompts = [...page.matchAll(/<div class="prompt">([^<]*)<\/div>/g)].map((m) => m[1]);
    expect(prompts).toEqual(['restyle the ride']);
    expect(page.match(/<summary>input<\/summary>/g)).toHaveLength(2);
    expect(page).toContain('https://x/ride.mp4');
  });
});
