import { describe, expect, it } from 'vitest';
import type { ReportData } from '../../src/report/data.js';
import { timelineSvg } from '../../src/report/timeline-svg.js';

/** A report's data with only what the timeline reads: the run's span and rows, its steps' tasks. */
function dataOf(rows: number, steps: Array<{ step: string; row: number; tasks: string[]; itemsFrom?: string }>) {
  return {
    summary: { started_at: 0, finished_at: 10_000, rows },
    traffic: [],
    dag: [],
    steps: steps.map(({ step, row, tasks, itemsFrom }) => ({
      step,
      row,
      status: 'succeeded',
      startedAt: 0,
      finishedAt: 9000,
      itemsFrom: itemsFrom ?? null,
      items: tasks.map((taskId, index) => ({
        index,
        taskId,
        status: 'succeeded',
        submittedAt: 1000 * index,
        finishedAt: 1000 * index + 500,
      })),
    })),
  } as unknown as ReportData;
}

const titles = (svg: string) => [...svg.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1]!.split(':')[0]);

describe("the report's timeline", () => {
  it('names each task as everywhere else: the row of a batch first, an index only for a for_each item', () => {
    const svg = timelineSvg(
      dataOf(2, [
        { step: 'thumbnail', row: 0, tasks: ['task_a'] },
        { step: 'thumbnail', row: 1, tasks: ['task_b'] },
        { step: 'hero', row: 1, tasks: ['task_c', 'task_d'] },
      ]),
    ).text;
    expect(titles(svg)).toEqual([
      'row 1 thumbnail task_a',
      'row 2 thumbnail task_b',
      'row 2 hero[0] task_c',
      'row 2 hero[1] task_d',
    ]);
    expect(svg).toContain('>row 2 hero</text>');
  });

  it('shades the pause between a stop and its resume, and says at the axis how much of the time it was', () => {
    const data = { ...dataOf(1, [{ step: 'hero', row: 0, tasks: ['task_a'] }]), pauses: [{ from: 2000, to: 6000 }] };
    const svg = timelineSvg(data as ReportData).text;
    expect(svg).toMatch(
      /<rect class="paused" x="[\d.]+" y="0" width="[\d.]+"[^>]*><title>paused between sessions: 4\.0 s<\/title>/,
    );
    expect(svg).toContain('>10 s (4.0 s of it paused between sessions)</text>');
    // Without a pause, the axis's end is the time alone.
    expect(timelineSvg(dataOf(1, [{ step: 'hero', row: 0, tasks: ['task_a'] }])).text).not.toContain('paused');
  });
});
