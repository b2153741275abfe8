import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileJournal, readJournalFile } from '../../src/store/journal.js';

let dir: string;
let path: string;
const line = (event: Record<string, unknown>) => `${JSON.stringify(event)}\n`;
const START = {
  type: 'run-started',
  t: 1,
  run_id: 'r',
  recipe: '/x.yaml',
  name: 'x',
  rows: [{}],
  sets: [],
  batch: null,
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'journal-'));
  path = join(dir, 'journal.jsonl');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readJournalFile', () => {
  it('skips a cut last line and names it', () => {
    const whole = line(START) + line({ type: 'step-started', t: 2, row: 0, step: 'a' });
    writeFileSync(path, `${whole}{"type":"step-fin`);
    const read = readJournalFile(path);
    expect(read.events.map((e) => e.type)).toEqual(['run-started', 'step-started']);
    expect(read.damagedLines).toEqual([3]);
  });

  it('reads on past a garbage line in the middle', () => {
    writeFileSync(path, `${line(START)}not json at all\n${line({ type: 'run-interrupted', t: 9 })}{"no":"type"}\n`);
    const read = readJournalFile(path);
    expect(read.events.map((e) => e.type)).toEqual(['run-started', 'run-interrupted']);
    expect(read.damagedLines).toEqual([2, 4]);
  });

  it('an empty file has no events and no damage', () => {
    writeFileSync(path, '');
    expect(readJournalFile(path)).toEqual({ events: [], damagedLines: [] });
  });
});

describe('FileJournal', () => {
  it('never glues a new record onto a partial last line', () => {
    writeFileSync(path, `${line(START)}{"type":"task-subm`);
    const journal = new FileJournal(path, () => 5);
    journal.append({ type: 'run-resumed' });
    journal.close();
    const read = readJournalFile(path);
    expect(read.events.map((e) => e.type)).toEqual(['run-started', 'run-resumed']);
    expect(read.damagedLines).toEqual([2]);
  });

  it('adds no blank line to a journal that ends cleanly', () => {
    writeFileSync(path, line(START));
    const journal = new FileJournal(path, () => 5);
    journal.append({ type: 'run-resumed' });
    journal.close();
    expect(readFileSync(path, 'utf8')).toBe(line(START) + line({ t: 5, type: 'run-resumed' }));
  });

  it('writes durable events in order', async () => {
    const journal = new FileJournal(path, () => 7);
    await journal.appendDurable({ ...START } as never);
    journal.append({ type: 'run-interrupted' });
    journal.close();
    appendFileSync(path, '');
    expect(readJournalFile(path).events.map((e) => e.type)).toEqual(['run-started', 'run-interrupted']);
  });
});
