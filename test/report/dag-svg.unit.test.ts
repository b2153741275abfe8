import { describe, expect, it } from 'vitest';
import type { ReportData } from '../../src/report/data.js';
import { dagSvg } from '../../src/report/dag-svg.js';

/** A report's data with only what the DAG reads: the steps' statuses and the recipe's DAG. */
function dataOf(dag: ReportData['dag'], steps: Array<{ step: string; status: string }>): ReportData {
  return { dag, steps } as unknown as ReportData;
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
