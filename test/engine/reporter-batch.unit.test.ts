import { describe, expect, it } from 'vitest';
import { ConsoleReporter, reporterConsumer } from '../../src/engine/reporter.js';
import type { EngineEvent } from '../../src/engine/events.js';

const ROWS = 12;

/** The console's lines for these events of a batch of ROWS rows of one step, `tile`. */
function linesOf(events: EngineEvent[]): string[] {
  let text = '';
  const consume = reporterConsumer(
    new ConsoleReporter(
      (written) => (text += written),
      () => 0,
    ),
    ROWS,
    () => 0,
  );
  for (const event of events) consume(event);
  return text.trim().split('\n');
}

const at = (row: number) => ({ step: 'tile', row });

describe('the console of a large batch', () => {
  it('counts the rows done before a resume in its progress, not a line each, and ends the step', () => {
    const lines = linesOf([
      ...Array.from({ length: 5 }, (_, row): EngineEvent => ({ type: 'step-resumed', at: at(row) })),
      ...Array.from({ length: ROWS - 5 }, (_, i): EngineEvent[] => [
        { type: 'step-started', at: at(5 + i), runs: undefined },
        {
          type: 'step-finished',
          at: at(5 + i),
          outputs: null,
          durationMs: 0,
          items: 1,
          skippedItems: i === 0 ? [0] : [],
        },
      ]).flat(),
    ]);
    // No line per row; the step's last line says how many rows were done before.
    expect(lines.filter((line) => line.includes('done before the resume'))).toEqual([lines.at(-1)]);
    expect(lines[0]).toBe(`▶ tile (${ROWS} runs)`);
    expect(lines.at(-1)).toMatch(/^✓ tile .*5 of 12 rows done before the resume/);
  });

  it('ends a step some rows of which failed with a cross, not a tick', () => {
    const failure = { reason: 'task-failed', message: 'no', retryable: false, outcomeUnknown: false };
    const lines = linesOf(
      Array.from({ length: ROWS }, (_, row): EngineEvent[] => [
        { type: 'step-started', at: at(row), runs: undefined },
        row < 2
          ? ({
              type: 'step-failed',
              at: at(row),
              failure,
              continued: false,
              location: { file: 'r.yaml', line: 1, column: 1 },
            } as EngineEvent)
          : { type: 'step-finished', at: at(row), outputs: null, durationMs: 0, items: 1, skippedItems: [] },
      ]).flat(),
    );
    expect(lines.at(-1)).toBe(`✗ tile failed: 2 of ${ROWS} rows failed`);
  });

  it('names the row of an item the cache served, as it does of every other item line', () => {
    const lines = linesOf([{ type: 'item-cached', item: { step: 'tile', row: 1, index: 1 }, key: 'k' }]);
    expect(lines).toEqual(['⚡ row 2 tile[1] cached']);
  });
});
