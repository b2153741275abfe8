import { describe, expect, it } from 'vitest';
import { ReadyQueue } from '../../src/engine/items.js';

const scope = { inputs: {}, steps: {}, run: { id: '', dir: '' }, env: {} };

describe('ReadyQueue: the items of a pass, in the order they become ready', () => {
  it('hands out items in order, waits for the next, and ends when every index was pushed or dropped', async () => {
    const queue = new ReadyQueue(3);
    queue.push({ index: 2, scope });
    expect(await queue.pull()).toMatchObject({ index: 2 });
    const waiting = queue.pull();
    queue.drop();
    queue.push({ index: 0, scope });
    expect(await waiting).toMatchObject({ index: 0 });
    expect(await queue.pull()).toBeUndefined();
  });

  it('wakes every waiting worker with nothing once the last index is dropped', async () => {
    const queue = new ReadyQueue(1);
    const workers = [queue.pull(), queue.pull()];
    queue.drop();
    expect(await Promise.all(workers)).toEqual([undefined, undefined]);
  });

  it('ends at once for a pass with no items', async () => {
    expect(await new ReadyQueue(0).pull()).toBeUndefined();
  });
});
