import { describe, expect, it } from 'vitest';
import type { ReportData } from '../../src/report/data.js';
import { dagSvg } from '../../src/report/dag-svg.js';

/** A report's data with only what the DAG reads: the steps' statuses, the recipe's DAG, the rows and the run's status. */
function dataOf(
  dag: ReportData['dag'],
  steps: Array<{ step: string; status: string }>,
  summary = { rows: 1, status: 'succeeded' },
): ReportData {
  return { dag, steps, summary } as unknown as ReportData;
}

describe("the report's DAG", () => {
  it("puts each step one column past its deepest dependency and colours it by its rows' statuses", () => {
    const svg = dagSvg(
      dataOf(
        [
          { id: 'a', action: 'llm', depends_on: [] },
          { id: 'b', action: 'llm', depends_on: ['a'] },
          { id: 'c', action: 'llm', depends_on: ['a', 'b'] },
          { id: 'd', action: 'llm', depends_on: ['a'] },
        ],
        [
          { step: 'a', status: 'succeeded' },
          { step: 'b', status: 'succeeded' },
          { step: 'b', status: 'failed' },
          // Cancelled in one row (an item it needed failed): not green, whatever the other rows did.
          { step: 'd', status: 'succeeded' },
          { step: 'd', status: 'cancelled' },
        ],
      ),
    )!.text;
    const box = (id: string) =>
      svg.match(new RegExp(`data-step="${id}" data-status="(\\w+)">[\\s\\S]*?<rect x="(\\d+)"`))!;
    expect(box('a').slice(1)).toEqual(['succeeded', '10']);
    expect(box('b').slice(1)).toEqual(['failed', '200']);
    expect(box('c').slice(1)).toEqual(['pending', '390']);
    expect(box('d').slice(1)).toEqual(['cancelled', '200']);
    expect(svg).toMatch(/data-step="d" data-status="cancelled">[\s\S]*?fill="#868e96"/);
  });

  it('in a batch, says how many rows each step succeeded in, beside the worst status', () => {
    const dag = [
      { id: 'bg', action: 'model', depends_on: [] },
      { id: 'clip', action: 'model', depends_on: ['bg'] },
    ];
    // Ten rows, the later rows' successes not listed (as in a batch past the listed rows): row 4's
    // bg failed, so its clip was cancelled.
    const steps = [
      { step: 'bg', status: 'succeeded' },
      { step: 'bg', status: 'failed' },
      { step: 'clip', status: 'succeeded' },
      { step: 'clip', status: 'cancelled' },
    ];
    const svg = dagSvg(dataOf(dag, steps, { rows: 10, status: 'failed' }))!.text;
    expect(svg).toMatch(
      /data-step="clip" data-status="cancelled">\s*<title>clip: 9 of 10 rows succeeded, 1 cancelled<\/title>/,
    );
    expect(svg).toContain('<text x="208" y="26" class="dag-id">clip · 9/10</text>');
    expect(svg).toContain('<title>bg: 9 of 10 rows succeeded, 1 failed</title>');
    // One row: the status alone.
    expect(dagSvg(dataOf(dag, steps.slice(0, 1)))!.text).toContain('<title>bg: succeeded</title>');
  });

  it('draws a chain of 100,000 steps listed last first: no recursion as deep as the chain', () => {
    const dag = Array.from({ length: 100_000 }, (_, i) => ({
      id: `s${i}`,
      action: 'llm',
      depends_on: i > 0 ? [`s${i - 1}`] : [],
    })).reverse();
    const svg = dagSvg(dataOf(dag, []))!.text;
    expect(svg).toContain('data-step="s99999" data-status="pending"');
    expect(svg).toMatch(/data-step="s99999" data-status="pending">[\s\S]*?<rect x="18999820"/);
    expect(svg).toContain(`width="${20 + 99_999 * 190 + 150}"`);
  });
});
