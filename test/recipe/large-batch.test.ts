import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/recipe/analyzer.js';
import { estimatePlan } from '../../src/recipe/estimate.js';
import { bundledDeps } from './bundled-deps.js';

const RECIPE = `version: 1
name: thumbnails
inputs:
  title: { type: string }
  aspect_ratio: { type: string, default: "16:9", enum: ["16:9", "1:1"] }
steps:
  thumbnail:
    uses: vendor-a/vendor-a-v3-t2i
    with:
      prompt: "\${{ inputs.title }}"
      aspect_ratio: \${{ inputs.aspect_ratio }}
      resolution: 1k
`;

/** A CSV of `count` rows, every one valid. */
function csv(count: number): string {
  const lines = ['title,aspect_ratio'];
  for (let i = 0; i < count; i++) lines.push(`Article ${i},${i % 2 === 0 ? '16:9' : '1:1'}`);
  return `${lines.join('\n')}\n`;
}

describe('a batch of more rows than the stack holds arguments', () => {
  // 100,000 rows passed, 130,000 stopped `plan` and `run` with "Maximum call stack size exceeded":
  // lists of one entry per row were spread as arguments (Math.max(...runs), push(...rows)).
  it('is analyzed and estimated at 200,000 rows', () => {
    const result = analyze(
      { path: 'thumbnails.yaml', text: RECIPE, cwd: process.cwd(), batch: { path: 'rows.csv', text: csv(200_000) } },
      bundledDeps,
    );
    if (!result.ok) throw new Error(result.error.map((d) => d.message).join('\n'));
    expect(result.value.rows).toHaveLength(200_000);
    const estimate = estimatePlan(result.value, { rpm: 600, concurrency: 4 });
    expect(estimate.rows).toBe(200_000);
    expect(estimate.totals.tasks).toEqual({ 'vendor-a/vendor-a-v3-t2i': 200_000 });
    expect(estimate.totals.requests.total).toBe(400_000);
  });

  it('with --skip-invalid-rows and every row refused, lists each of them as an error', () => {
    const rows = csv(200_000).replaceAll('1:1', '4:3').replaceAll('16:9', '4:3');
    const result = analyze(
      {
        path: 'thumbnails.yaml',
        text: RECIPE,
        cwd: process.cwd(),
        batch: { path: 'rows.csv', text: rows },
        skipInvalidRows: true,
      },
      bundledDeps,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toHaveLength(200_000);
    expect(result.error[0]!.message).toBe(`input 'aspect_ratio' must be one of "16:9", "1:1", got "4:3"`);
  });

  it('read row by row, still reports only the syntax error of a CSV that breaks after bad rows', () => {
    // Rows are checked as they are read: the bad rows before the error must not be reported with it.
    const rows = `title,aspect_ratio\nA,4:3\nB,"16:9"\n"C,1:1\nD,1:1\nE,""\n`;
    const result = analyze(
      { path: 'thumbnails.yaml', text: RECIPE, cwd: process.cwd(), batch: { path: 'rows.csv', text: rows } },
      bundledDeps,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    // At the quote that opened it, line 4, not at the end of the file where csv-parse stopped.
    expect(result.error.map((d) => [d.message, d.file.position(d.range.start).line])).toEqual([
      ['not valid CSV: the value this " opens is never closed (a " inside a quoted value is written "")', 4],
    ]);
  });
});
