import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { RowAdmission, startRows } from '../../src/engine/row-admission.js';

/** A promise and its resolver, for a row or a task that ends when the test says. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('startRows', () => {
  it('starts rows in order, never more than the cap at once, each as one ends', async () => {
    const ends = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    const done = startRows(5, 2, undefined, async (row) => {
      started.push(row);
      await ends[row]!.promise;
    });
    await settle();
    expect(started).toEqual([0, 1]);
    ends[1]!.resolve();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    for (const end of ends) end.resolve();
    await done;
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it('rejects with the first error once the rows in progress have ended, and starts no more', async () => {
    const slow = deferred();
    const started: number[] = [];
    let slowEnded = false;
    const done = startRows(10, 2, undefined, async (row) => {
      started.push(row);
      if (row === 0) {
        await slow.promise;
        slowEnded = true;
      }
      if (row === 1) throw new Error('row 1 broke');
    });
    const outcome = done.then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await settle();
    expect(slowEnded).toBe(false);
    slow.resolve();
    expect(await outcome).toBe('row 1 broke');
    expect(slowEnded).toBe(true);
    expect(started).toEqual([0, 1]);
  });
});

/** Lets every row prepared so far end its preparation and its tasks, until no row is left. */
async function drain(h: { prepared: Map<number, { resolve: () => void }>; inOrder: Array<{ resolve: () => void }> }) {
  for (let round = 0; round < 50; round++) {
    for (const d of [...h.prepared.values(), ...h.inOrder]) d.resolve();
    await settle();
  }
}

describe('RowAdmission', () => {
  /**
   * Rows that each prepare until the test says, then queue `tasksPerRow` tasks and wait for them;
   * the tasks are expected to take `taskMs`, and the clock moves only when the test moves it.
   */
  function harness(slots: number, taskMs = 1000, rows = 6, tasksPerRow: number | ((row: number) => number) = 1) {
    const tasks = new PQueue({ concurrency: slots });
    const clock = { time: 0, now: () => clock.time };
    const admission = new RowAdmission(tasks, clock, rows);
    const prepared = new Map<number, ReturnType<typeof deferred>>();
    /** Each row's first task's end; every task's end, in the order they were queued. */
    const taskEnds = new Map<number, ReturnType<typeof deferred>>();
    const inOrder: Array<ReturnType<typeof deferred>> = [];
    const started: number[] = [];
    const run = async (row: number) => {
      started.push(row);
      const prep = deferred();
      prepared.set(row, prep);
      await prep.promise;
      const ends = Array.from({ length: typeof tasksPerRow === 'number' ? tasksPerRow : tasksPerRow(row) }, deferred);
      if (ends[0]) taskEnds.set(row, ends[0]);
      inOrder.push(...ends);
      for (const _ of ends) admission.taskReady(row, taskMs);
      await Promise.all(ends.map((end) => tasks.add(() => admission.inSlot(row, () => end.promise))));
    };
    /** The task in the slot ends `atMs` on the clock; the next one waiting takes the slot. */
    const endNext = async (atMs: number) => {
      clock.time = atMs;
      inOrder.shift()!.resolve();
      await settle();
    };
    return { tasks, clock, admission, prepared, taskEnds, inOrder, started, run, endNext };
  }

  it('lets in no more rows than there are slots while they prepare', async () => {
    const h = harness(2);
    const done = startRows(6, 64, h.admission, h.run);
    await settle();
    expect(h.started).toEqual([0, 1]);
    // Row 0 has its task ready, and a slot takes it: one row prepares, so one more may.
    h.prepared.get(0)!.resolve();
    await settle();
    expect(h.started).toEqual([0, 1, 2]);
    await drain(h);
    await done;
    expect(h.started).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('holds new rows while as many tasks wait for a slot as there are slots', async () => {
    const h = harness(1, 1000, 4);
    const done = startRows(4, 64, h.admission, h.run);
    await settle();
    expect(h.started).toEqual([0]);
    // Row 0's task takes the one slot: its row no longer prepares.
    h.prepared.get(0)!.resolve();
    await settle();
    expect(h.started).toEqual([0, 1]);
    // Row 1's task waits for the slot: no row starts.
    h.prepared.get(1)!.resolve();
    await settle();
    expect(h.tasks.size).toBe(1);
    expect(h.started).toEqual([0, 1]);
    // The slot frees and row 1's task takes it: row 2 may start.
    h.taskEnds.get(0)!.resolve();
    await settle();
    expect(h.started).toEqual([0, 1, 2]);
    h.prepared.get(2)!.resolve();
    await settle();
    expect(h.tasks.size).toBe(1);
    expect(h.started).toEqual([0, 1, 2]);
    await drain(h);
    await done;
  });

  it('a row that waits on a task in a slot does not hold back a new one', async () => {
    const h = harness(2, 1000, 3);
    const done = startRows(3, 64, h.admission, h.run);
    await settle();
    h.prepared.get(0)!.resolve();
    h.prepared.get(1)!.resolve();
    await settle();
    // Both rows have their tasks in the slots (a long video each): a third row starts at once.
    expect(h.tasks.pending).toBe(2);
    expect(h.started).toEqual([0, 1, 2]);
    await drain(h);
    await done;
  });

  it('lets more rows prepare at once where preparing takes longer than the slots take for a row', async () => {
    // One slot, a task of 10 s a row, rows that take 30 s to reach their task.
    const h = harness(1, 10_000);
    const done = startRows(6, 64, h.admission, h.run);
    await settle();
    expect(h.started).toEqual([0]);
    h.clock.time = 30_000;
    h.prepared.get(0)!.resolve();
    await settle();
    // Nothing is known yet of a row's tasks: one row prepares, as one slot has.
    expect(h.started).toEqual([0, 1]);
    h.taskEnds.get(0)!.resolve();
    await settle();
    // A row took 30 s to prepare and brought 10 s of work: three must prepare to keep the slot busy.
    expect(h.started).toEqual([0, 1, 2, 3]);
    await drain(h);
    await done;
  });

  it('starts a held row once the rest of the batch would end before it, whatever waits', async () => {
    // One slot; each row prepares, then has three tasks ready at once, each holding the slot 10 s.
    const h = harness(1, 10_000, 3, 3);
    const { endNext } = h;
    const done = startRows(3, 64, h.admission, h.run);
    await settle();
    // Row 0 prepares for 60 s, then its three tasks hold the slot 10 s each.
    h.clock.time = 60_000;
    h.prepared.get(0)!.resolve();
    await settle();
    await endNext(70_000);
    await endNext(80_000);
    // Row 0's last task has the slot and nothing waits: row 1 starts, and has its tasks at once.
    expect(h.started).toEqual([0, 1]);
    h.prepared.get(1)!.resolve();
    await settle();
    expect(h.tasks.size).toBe(3);
    // Row 0 ends: 90 s from start to end, 30 s of slot time. The batch still needs 3 × 30 s less the
    // 30 s held: 60 s on one slot, within 90 s. Row 2 starts though two of row 1's tasks wait.
    await endNext(90_000);
    expect(h.tasks.size).toBe(2);
    expect(h.started).toEqual([0, 1, 2]);
    h.prepared.get(2)!.resolve();
    for (let t = 100_000; h.inOrder.length > 0; t += 10_000) await endNext(t);
    await done;
  });

  it("learns what a row needs only from rows that held a slot (a resume's finished rows hold none)", async () => {
    // Rows 0 and 1 end without a task, as a resume's finished rows do; rows 2 to 4 have three each.
    const h = harness(1, 10_000, 5, (row) => (row < 2 ? 0 : 3));
    const { endNext } = h;
    const done = startRows(5, 64, h.admission, h.run);
    for (const row of [0, 1, 2]) {
      await settle();
      h.prepared.get(row)!.resolve();
    }
    await settle();
    expect(h.started).toEqual([0, 1, 2]);
    await endNext(10_000);
    await endNext(20_000);
    // Row 2's last task has the slot: row 3 starts, and its three tasks wait.
    h.prepared.get(3)!.resolve();
    await settle();
    await endNext(30_000);
    await endNext(40_000);
    // Row 2 took 30 s of slot time: rows 3 and 4 still need 60 s less row 3's 10 s, over 30 s a row
    // takes. Counted with rows 0 and 1 (a mean of 10 s a row), row 4 would start here.
    expect(h.tasks.size).toBe(1);
    expect(h.started).toEqual([0, 1, 2, 3]);
    await endNext(50_000);
    expect(h.started).toEqual([0, 1, 2, 3, 4]);
    h.prepared.get(4)!.resolve();
    for (let t = 60_000; h.inOrder.length > 0; t += 10_000) await endNext(t);
    await done;
  });
});
