import { describe, expect, it } from 'vitest';
import { RowTable } from '../../src/recipe/row-table.js';

describe('a batch table of rows', () => {
  it('gives each row back as the analysis made it: defaults, the row, then overrides, in that key order', () => {
    const table = new RowTable({ style: 'flat', size: 2 }, { seed: 7 });
    table.push({ title: 'One', size: 3 });
    table.push({ title: 'Zwei ü 😀', tags: ['a', { b: [1, 2.5] }], on: true, nothing: null });
    expect(table).toHaveLength(2);
    const first = table.at(0)!;
    expect(first).toEqual({ style: 'flat', size: 3, title: 'One', seed: 7 });
    expect(Object.keys(first)).toEqual(['style', 'size', 'title', 'seed']);
    expect(table.at(1)).toEqual({
      style: 'flat',
      size: 2,
      title: 'Zwei ü 😀',
      tags: ['a', { b: [1, 2.5] }],
      on: true,
      nothing: null,
      seed: 7,
    });
    expect(table.at(-1)).toEqual(table.at(1));
    expect(table.at(2)).toBeUndefined();
    expect([...table].map((row) => row.title)).toEqual(['One', 'Zwei ü 😀']);
    expect([...table.entries()].map(([index]) => index)).toEqual([0, 1]);
  });

  it('makes a new object each time, so no reader changes another reader’s row', () => {
    const table = new RowTable({}, {});
    table.push({ title: 'One' });
    const row = table.at(0)!;
    row.title = 'changed';
    expect(table.at(0)).toEqual({ title: 'One' });
  });

  it('keeps as they are the numbers JSON would change', () => {
    const table = new RowTable({}, {});
    table.push({ n: -0 });
    table.push({ n: Number.POSITIVE_INFINITY });
    table.push({ n: 1 });
    expect(Object.is(table.at(0)!.n, -0)).toBe(true);
    expect(table.at(1)!.n).toBe(Number.POSITIVE_INFINITY);
    expect(table.at(2)!.n).toBe(1);
  });

  it('leaves rows out by index, and grows past its first buffer', () => {
    const table = new RowTable({ fixed: 'x' }, {});
    for (let i = 0; i < 5000; i++) table.push(i === 3 ? { n: -0 } : { n: i, text: 'é'.repeat(i % 7) });
    const kept = table.without(new Set([0, 2, 4999])).trimmed();
    expect(kept).toHaveLength(4997);
    expect(kept.at(0)).toEqual({ fixed: 'x', n: 1, text: 'é' });
    expect(Object.is(kept.at(1)!.n, -0)).toBe(true);
    expect(kept.at(2)).toEqual({ fixed: 'x', n: 4, text: 'éééé' });
    expect(kept.at(-1)).toEqual({ fixed: 'x', n: 4998, text: 'é'.repeat(4998 % 7) });
    table.clear();
    expect(table).toHaveLength(0);
    expect([...table]).toEqual([]);
  });
});
