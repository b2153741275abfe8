import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/recipe/analyzer.js';
import type { Diagnostic } from '../../src/recipe/diagnostics.js';
import { FIVE_ROWS, POSTER_RECIPE, RUN_TIME_RATIO_RECIPE, rowMessages } from '../support/bad-rows.js';
import { IMAGE_SLUG } from '../support/recipes.js';
import { bundledDeps } from './bundled-deps.js';

const RECIPE = 'recipes/posters.yaml';

function analyzeRows(rows: string, options: { skip?: boolean; recipe?: string; path?: string } = {}) {
  return analyze(
    {
      path: RECIPE,
      text: options.recipe ?? POSTER_RECIPE,
      cwd: process.cwd(),
      batch: { path: options.path ?? 'rows.csv', text: rows },
      ...(options.skip ? { skipInvalidRows: true } : {}),
    },
    bundledDeps,
  );
}

const placed = (diagnostics: Diagnostic[]) =>
  diagnostics.map((d) => ({ file: d.file.path, line: d.file.position(d.range.start).line, message: d.message }));

describe('batch rows a model schema rejects', () => {
  it('are reported at their rows with the input-level ones: recipe field, model field, allowed values', () => {
    const result = analyzeRows(FIVE_ROWS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(placed(result.error)).toEqual(rowMessages(RECIPE).map((p) => ({ file: 'rows.csv', ...p })));
  });

  it('with --skip-invalid-rows are left out and listed in the same list as the input-level ones', () => {
    const result = analyzeRows(FIVE_ROWS, { skip: true });
    if (!result.ok) throw new Error(result.error.map((d) => d.message).join('\n'));
    expect([...result.value.rows].map((row) => row.title)).toEqual(['One', 'Five']);
    expect(result.value.skippedRows).toEqual(
      rowMessages(RECIPE).map((p) => ({ where: `rows.csv:${p.line}:1`, message: p.message })),
    );
    expect(result.value.steps[0]!.runs).toEqual([1, 1]);
  });

  it('reports every row that gives the same bad value, and a prompt over its length or a number out of range', () => {
    const long = 'x'.repeat(2500);
    const rows = `title,count,ratio\nA,1,5:5\nB,1,5:5\n${long},1,1:1\nD,10,1:1\n`;
    const result = analyzeRows(rows);
    if (result.ok) throw new Error('expected errors');
    expect(
      placed(result.error).map((d) => [d.line, d.message.replace(/ \(recipes\/posters\.yaml:\d+:\d+\)/, '')]),
    ).toEqual([
      [2, `input 'ratio' gives steps.poster.with.aspect_ratio a value ${IMAGE_SLUG} rejects: ${enumOf('5:5')}`],
      [3, `input 'ratio' gives steps.poster.with.aspect_ratio a value ${IMAGE_SLUG} rejects: ${enumOf('5:5')}`],
      [
        4,
        `input 'title' gives steps.poster.with.prompt a value ${IMAGE_SLUG} rejects: ` +
          'prompt must be at most 2500 characters, got 2513',
      ],
      [5, `input 'count' gives steps.poster.with.n a value ${IMAGE_SLUG} rejects: n must be at most 9, got 10`],
    ]);
  });

  it('a JSONL row is judged the same way', () => {
    const result = analyzeRows('{"title": "A"}\n{"title": "B", "ratio": "7:3"}\n', { path: 'rows.jsonl' });
    if (result.ok) throw new Error('expected errors');
    expect(placed(result.error).map((d) => `${d.file}:${d.line}`)).toEqual(['rows.jsonl:2']);
  });

  it('a value the recipe itself gets wrong is its error at the recipe, never a skipped row', () => {
    const recipe = POSTER_RECIPE.replace('n: ${{ inputs.count }}', 'n: 0');
    const result = analyzeRows('title\nA\nB\n', { recipe, skip: true });
    if (result.ok) throw new Error('expected errors');
    expect(placed(result.error)).toEqual([
      { file: RECIPE, line: 13, message: `n must be at least 1, got 0 (${IMAGE_SLUG})` },
    ]);
  });

  it('a value known only at run time is not judged at plan time: the row stays', () => {
    const result = analyzeRows('title\nA\n', { recipe: RUN_TIME_RATIO_RECIPE, skip: true });
    if (!result.ok) throw new Error(result.error.map((d) => d.message).join('\n'));
    expect(result.value.rows).toHaveLength(1);
    expect(result.value.skippedRows).toBeUndefined();
  });

  it('a row whose step does not run (its `if` false) is not judged by that step', () => {
    const recipe = POSTER_RECIPE.replace(
      '  ratio: { type: string, default: "16:9" }\n',
      '  ratio: { type: string, default: "16:9" }\n  draw: { type: boolean, default: true }\n',
    ).replace('    uses:', '    if: ${{ inputs.draw }}\n    uses:');
    const result = analyzeRows('title,ratio,draw\nA,7:3,false\nB,7:3,true\n', { recipe });
    if (result.ok) throw new Error('expected errors');
    expect(placed(result.error).map((d) => d.line)).toEqual([3]);
  });

  it('with every row rejected there is nothing to run: the rows are errors even with --skip-invalid-rows', () => {
    const result = analyzeRows('title,ratio\nA,5:5\nB,6:6\n', { skip: true });
    if (result.ok) throw new Error('expected errors');
    expect(placed(result.error).map((d) => d.line)).toEqual([2, 3]);
  });

  it('without --batch a rejected --set value stays an error at the recipe field', () => {
    const result = analyze(
      { path: RECIPE, text: POSTER_RECIPE, cwd: process.cwd(), sets: ['title=A', 'ratio=7:3'] },
      bundledDeps,
    );
    if (result.ok) throw new Error('expected errors');
    expect(placed(result.error)).toEqual([{ file: RECIPE, line: 12, message: `${enumOf('7:3')} (${IMAGE_SLUG})` }]);
  });
});

const enumOf = (got: string) => `aspect_ratio must be one of 16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3, 21:9; got "${got}"`;
