import {
  appendFileSync,
  existsSync,
  fdatasync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileJournal, type JournalIo, JournalWriteError, readJournalFile } from '../../src/store/journal.js';

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

  it('on a full disk cuts off the lines it could not write whole, refuses durable events and tells the run', async () => {
    writeFileSync(path, line(START));
    let room = 40;
    // A disk with `room` bytes left: a write takes what fits, then the next one fails with ENOSPC.
    const io: JournalIo = {
      writeSync(fd, bytes, offset) {
        if (room === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        const fits = Math.min(room, bytes.length - offset);
        room -= fits;
        return writeSync(fd, bytes, offset, fits);
      },
      fdatasync,
    };
    const journal = new FileJournal(path, () => 5, io);
    const told: JournalWriteError[] = [];
    journal.whenFailed((failure) => told.push(failure));
    const read: unknown[] = [];
    journal.readWritten((event) => read.push(event));
    await journal.appendDurable({ type: 'run-resumed' });
    const refused = journal.appendDurable({ type: 'step-started', row: 0, step: 'image' });
    journal.append({ type: 'run-interrupted' });
    await expect(refused).rejects.toBeInstanceOf(JournalWriteError);
    expect(told).toHaveLength(1);
    expect(told[0]!.message).toBe(`cannot write the run's journal ${path}: ENOSPC, no space left on device`);
    expect(journal.failure).toBe(told[0]);
    // Nothing more is taken, and the file ends on its last whole line.
    journal.append({ type: 'run-interrupted' });
    await expect(journal.appendDurable({ type: 'run-interrupted' })).rejects.toBe(told[0]);
    journal.close();
    expect(readFileSync(path, 'utf8')).toBe(line(START) + line({ t: 5, type: 'run-resumed' }));
    expect(readJournalFile(path).damagedLines).toEqual([]);
    // A reader of the lines as written (the run's live summary) saw the lines the file kept, and no other.
    expect(read).toEqual([{ t: 5, type: 'run-resumed' }]);
  });

  it.runIf(existsSync('/dev/full'))(
    'on a device that is always full fails without throwing out of the event loop',
    async () => {
      const journal = new FileJournal('/dev/full', () => 5);
      const failed = new Promise<JournalWriteError>((resolve) => journal.whenFailed(resolve));
      journal.append({ type: 'run-resumed' });
      expect((await failed).message).toBe("cannot write the run's journal /dev/full: ENOSPC, no space left on device");
      journal.close();
    },
  );
});
