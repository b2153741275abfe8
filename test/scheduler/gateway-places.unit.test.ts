import { describe, expect, it } from 'vitest';
import { GatewayPlaces } from '../../src/scheduler/gateway-places.js';

/** Two places; `now` as the test sets it. */
function twoPlaces() {
  const clock = { now: 0 };
  return { places: new GatewayPlaces(2, () => clock.now), clock };
}

const listening = () => new AbortController().signal;

describe('GatewayPlaces', () => {
  it('foresees a queued task starting when the place it waits for frees, first come first served', () => {
    const { places } = twoPlaces();
    const a = places.add(0, false, 10_000);
    places.add(1_000, false, 4_000);
    const c = places.add(2_000, true, 5_000);
    const d = places.add(3_000, true, 5_000);
    const e = places.add(3_500, true, 1_000);
    expect(a.expectedStart()).toBe(0);
    // b frees its place at 5 s, a at 10 s; c takes the first, d the second; e the one c frees at 10 s.
    expect(c.expectedStart()).toBe(5_000);
    expect(d.expectedStart()).toBe(10_000);
    expect(e.expectedStart()).toBe(10_000);
  });

  it('moves a start with what the reads see: an end, a task still waiting, a task not seen ended', async () => {
    const { places, clock } = twoPlaces();
    const a = places.add(0, false, 10_000);
    places.add(0, false, 10_000);
    const c = places.add(0, true, 3_000);
    const d = places.add(0, true, 3_000);
    expect(c.expectedStart()).toBe(10_000);
    // a is seen, at 7 s, to have ended at 6 s: c started then, and whoever waits on a start is told.
    clock.now = 7_000;
    const moved = c.moved(listening());
    a.ended(6_000);
    await moved;
    expect(c.expectedStart()).toBe(6_000);
    // The other task ahead, not seen ended past its expected time, may be running still: d starts
    // no earlier than now, nor than a read that found it waiting.
    clock.now = 12_000;
    expect(d.expectedStart()).toBe(12_000);
    d.seenPending(12_500);
    expect(d.expectedStart()).toBe(12_500);
  });

  it('places a task seen running between its last pending read and that read, by the tasks ahead as they stood then', () => {
    const { places, clock } = twoPlaces();
    places.add(0, false, 4_000);
    places.add(0, false, 10_000);
    const c = places.add(0, true, 3_000);
    // Pending at 3 s, running at 6 s, neither task ahead seen ended: the one expected to end at 4 s
    // let it start then, not at the read that saw it running.
    clock.now = 6_000;
    c.seenPending(3_000);
    c.seenRunning(6_000);
    expect(c.expectedStart()).toBe(4_000);
    // Expected to end at 10 s, past the read that saw it running: it started by then at the latest.
    const late = twoPlaces();
    late.places.add(0, false, 10_000);
    late.places.add(0, false, 10_000);
    const d = late.places.add(0, true, 3_000);
    late.clock.now = 6_000;
    d.seenRunning(6_000);
    expect(d.expectedStart()).toBe(6_000);
  });

  it('keeps the places of tasks that have left the replay, and of tasks given up on until their expected end', () => {
    const { places } = twoPlaces();
    const a = places.add(0, false, 10_000);
    const b = places.add(0, false, 10_000);
    a.ended(7_000);
    b.ended(9_000);
    // a and b have left; their places free at 7 s and 9 s all the same.
    const c = places.add(1_000, true, 1_000);
    const d = places.add(2_000, true, 1_000);
    const e = places.add(3_000, true, 1_000);
    expect([c, d, e].map((task) => task.expectedStart())).toEqual([7_000, 8_000, 9_000]);
    // c is no longer read (a failed read): the gateway still runs it, to its expected end at 8 s.
    c.abandoned();
    expect(e.expectedStart()).toBe(9_000);
  });

  it('stops listening for a move once told to', async () => {
    const { places } = twoPlaces();
    const a = places.add(0, false, 10_000);
    const stop = new AbortController();
    const moved = a.moved(stop.signal);
    stop.abort();
    await moved;
    expect((places as unknown as { listeners: Set<unknown> }).listeners.size).toBe(0);
  });
});
