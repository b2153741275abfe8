import { describe, expect, it } from 'vitest';
import { TrafficMeter } from '../../src/engine/traffic.js';
import { reportData } from '../../src/report/data.js';
import { packLanes } from '../../src/report/timeline-svg.js';
import type { JournalEvent } from '../../src/store/journal.js';
import { ManualClock } from '../support/manual-clock.js';

const endpoints = { toolUrl: 'http://127.0.0.1:9/tools', llmUrl: 'http://127.0.0.1:9/llm' };
const api = 'http://127.0.0.1:9/api/v1';

describe('the traffic meter', () => {
  it('tells of each second that saw requests, by kind, with its 429s, and counts the last minute', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0, 200));
    const events: unknown[] = [];
    const meter = new TrafficMeter(endpoints, clock);
    meter.attach((e) => events.push(e));
    meter.record({ kind: 'submit', method: 'POST', url: `${api}/vendor-a/model`, status: 200 });
    meter.record({ kind: 'submit', method: 'POST', url: `${api}/vendor-a/model`, status: 429 });
    meter.record({ kind: 'read', method: 'GET', url: `${api}/tasks/task_1`, status: 200 });
    await clock.advance(1000);
    meter.record({ kind: 'call', method: 'POST', url: `${endpoints.toolUrl}/v1/web-search`, status: 200 });
    meter.record({ kind: 'call', method: 'POST', url: `${endpoints.llmUrl}/v1/chat/completions`, status: null });
    meter.record({ kind: 'call', method: 'POST', url: `${api}/files`, status: 200 });
    expect(events).toEqual([
      { type: 'requests', second: Date.UTC(2026, 0, 1), counts: { submit: 2, poll: 1 }, rateLimited: 1 },
    ]);
    meter.flush();
    expect(events[1]).toEqual({
      type: 'requests',
      second: Date.UTC(2026, 0, 1, 0, 0, 1),
      counts: { tool: 1, text: 1, upload: 1 },
      rateLimited: 0,
    });
    expect([meter.perMinute(), meter.total, meter.rateLimited]).toEqual([6, 6, 1]);
    await clock.advance(59_500);
    expect(meter.perMinute()).toBe(3);
  });
});

describe('the report data, from a journal', () => {
  const t0 = Date.UTC(2026, 0, 1);
  const events: JournalEvent[] = [
    {
      type: 'run-started',
      t: t0,
      run_id: 'r1',
      recipe: '/r.yaml',
      name: 'r',
      rows: [{}],
      sets: [],
      batch: null,
      dag: [{ id: 'hero', action: 'model', depends_on: [], model: 'v/m' }],
    },
    { type: 'step-started', t: t0, row: 0, step: 'hero' },
    {
      type: 'task-submitted',
      t: t0 + 10,
      row: 0,
      step: 'hero',
      index: 0,
      slug: 'v/m',
      request: 'q0',
      task_id: 'task_a',
      input: { prompt: 'a cat' },
    },
    {
      type: 'task-submitted',
      t: t0 + 20,
      row: 0,
      step: 'hero',
      index: 1,
      slug: 'v/m',
      request: 'q1',
      task_id: 'task_b',
      input: { prompt: 'a dog' },
    },
    { type: 'request-sent', t: t0 + 30, row: 0, step: 'hero', index: 2, slug: 'v/m', request: 'q2' },
    {
      type: 'submission-refused',
      t: t0 + 40,
      row: 0,
      step: 'hero',
      index: 2,
      reason: 'rate-limited',
      input: { prompt: 'a bird' },
    },
    {
      type: 'task-finished',
      t: t0 + 900,
      row: 0,
      step: 'hero',
      index: 0,
      task_id: 'task_a',
      status: 'success',
      duration_ms: 800,
      result_expires_at: null,
      polls: 2,
    },
    {
      type: 'output-written',
      t: t0 + 950,
      row: 0,
      step: 'hero',
      index: 0,
      task_id: 'task_a',
      url: 'u',
      path: '/o/hero-1.png',
      bytes: 5,
    },
    { type: 'item-finished', t: t0 + 960, row: 0, step: 'hero', index: 0, outputs: {} },
    {
      type: 'task-finished',
      t: t0 + 990,
      row: 0,
      step: 'hero',
      index: 1,
      task_id: 'task_b',
      status: 'FAILED',
      duration_ms: 800,
      result_expires_at: null,
      polls: 3,
      error: 'Content: refused',
    },
    { type: 'requests', t: t0 + 1000, second: t0, counts: { submit: 3, poll: 5 }, rate_limited: 1 },
    {
      type: 'step-failed',
      t: t0 + 1000,
      row: 0,
      step: 'hero',
      reason: 'task-failed',
      message: 'task task_b failed',
      outcome_unknown: false,
    },
    { type: 'run-finished', t: t0 + 1001, status: 'failed', outputs: null },
  ];

  it('gives each item its task, prompt, polls, files and verdict, and totals the requests', () => {
    const data = reportData({ events, damagedLines: [] });
    if (!data.ok) throw new Error(data.error.message);
    const [hero] = data.value.steps;
    expect(hero!.items.map((i) => [i.index, i.taskId, i.status, i.polls, i.error, i.files.map((f) => f.kind)])).toEqual(
      [
        [0, 'task_a', 'succeeded', 2, null, ['image']],
        [1, 'task_b', 'failed', 3, 'Content: refused', []],
        [2, null, 'failed', null, 'submission refused (rate-limited)', []],
      ],
    );
    expect(hero!.items[0]!.input).toEqual({ prompt: 'a cat' });
    // A refused submission has no task, but its card still shows what was asked.
    expect(hero!.items[2]!.input).toEqual({ prompt: 'a bird' });
    expect(data.value.totals).toMatchObject({ tasks: 2, files: 1, rateLimited: 1, cacheHits: null });
    expect(data.value.totals.requests).toMatchObject({ submit: 3, poll: 5, upload: 0 });
    expect(data.value.dag).toEqual([{ id: 'hero', action: 'model', depends_on: [], model: 'v/m' }]);
  });

  it('counts a submission for each task at least, when a kill lost the last second of the request counts', () => {
    const killed = events.filter((event) => event.type !== 'requests' && event.type !== 'run-finished');
    const data = reportData({ events: killed, damagedLines: [] });
    if (!data.ok) throw new Error(data.error.message);
    expect(data.value.totals.tasks).toBe(2);
    expect(data.value.totals.requests).toMatchObject({ submit: 2, poll: 0 });
  });

  it('counts the hits of the step cache, and marks the items it restored', () => {
    const [start, step] = events;
    const hit: JournalEvent = { type: 'item-cached', t: t0 + 5, row: 0, step: 'hero', index: 0, key: 'k0' };
    const finished: JournalEvent = { type: 'item-finished', t: t0 + 6, row: 0, step: 'hero', index: 0, outputs: {} };
    const data = reportData({ events: [start!, step!, hit, finished], damagedLines: [] });
    if (!data.ok) throw new Error(data.error.message);
    expect(data.value.totals.cacheHits).toBe(1);
    expect(data.value.steps[0]!.items[0]).toMatchObject({ cached: true, status: 'succeeded', taskId: null });
  });

  it('packs task bars into as few lanes as keep them apart', () => {
    const bar = (start: number, end: number) => ({ start, end, status: 'succeeded', title: '' });
    const lanes = packLanes([bar(0, 10), bar(5, 15), bar(10, 20), bar(12, 30), bar(16, 18)]);
    expect(lanes.map((l) => l.map((b) => b.start))).toEqual([[0, 10], [5, 16], [12]]);
  });
});
