import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleReporter } from '../../src/engine/reporter.js';
import { LiveView } from '../../src/live/live-view.js';
import { ManualClock } from '../support/manual-clock.js';

/** A terminal stand-in: every write is kept, ANSI codes stripped, so frames can be read back. */
class FakeTty extends Writable {
  readonly isTTY = true;
  readonly columns = 120;
  readonly rows = 40;
  readonly writes: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.writes.push(chunk.toString());
    done();
  }
}

/** The renderer's frames as drawn, in order, and the lines it kept above them. */
function recordingSink() {
  const frames: string[] = [];
  const kept: string[] = [];
  const sink = Object.assign((frame: string) => void frames.push(plain(frame)), {
    persist: (text: string) => void kept.push(text),
    done: () => {},
  });
  return { sink, frames, kept };
}

const ESC = String.fromCharCode(27);
const ANSI = new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g');
const plain = (text: string) => text.replace(ANSI, '');

function setUp(limit = 60, noColor = false) {
  const clock = new ManualClock();
  const { sink, frames } = recordingSink();
  const traffic = { rateLimited: 0, sent: 0, perMinute: () => traffic.sent, limit: () => limit };
  const view = new LiveView({ stream: new FakeTty(), clock, traffic, sink, noColor });
  return { clock, frames, traffic, view };
}

describe('the live view', () => {
  it('advances the bar and shows done/total, tasks in flight and an ETA from the pace so far', async () => {
    const { clock, frames, view } = setUp();
    view.stepStarted('hero', 10);
    for (let i = 0; i < 4; i++) view.taskSubmitted('hero', `hero[${i}]`, `task_${i}`);
    await clock.advance(1000);
    const first = frames.at(-1)!;
    expect(first).toMatch(/hero ░{24}\s+0\/10 {2}4 in flight {2}ETA …/);
    // Tasks leave the count in flight by their own ends, a failed one too; items by their finishing.
    view.taskEnded('hero');
    view.taskEnded('hero');
    view.itemFinished('hero', 1, 10);
    view.itemFinished('hero', 2, 10);
    await clock.advance(1000);
    // The second item's frame comes a tenth of a second after the first's: 2 done in 1.1 s, 8 more take 4.4 s.
    expect(frames.at(-1)).toMatch(/hero █{5}░{19}\s+2\/10 {2}2 in flight {2}ETA 4\.4s\n.*elapsed 1\.1s/);
    await clock.advance(1000);
    // No progress for a second: the frame drawn each second shows the pace slowing.
    expect(frames.at(-1)).toMatch(/2\/10 {2}2 in flight {2}ETA 8\.4s\n.*elapsed 2\.1s/);
    for (let done = 3; done <= 5; done++) view.itemFinished('hero', done, 10);
    view.taskEnded('hero');
    // A task that failed ends without finishing an item: it leaves the count all the same.
    view.taskEnded('hero');
    await clock.advance(100);
    expect(frames.at(-1)).toMatch(/hero █{12}░{12}\s+5\/10 {2}0 in flight {2}ETA 3\.1s\n.*elapsed 3\.1s/);
  });

  it('counts the items done before a resume in the bar, and not in the pace of its ETA', async () => {
    const { clock, frames, view } = setUp();
    view.stepStarted('hero', 10, 6);
    await clock.advance(1000);
    expect(frames.at(-1)).toMatch(/hero █{14}░{10}\s+6\/10 {2}0 in flight {2}ETA …/);
    view.itemFinished('hero', 7, 10);
    await clock.advance(1000);
    // One item in the 1.1 s to this frame: three more take 3.3 s, not the 0.5 s that counting the six would give.
    expect(frames.at(-1)).toMatch(/7\/10 {2}0 in flight {2}ETA 3\.3s/);
  });

  it('dims its footer, but not with NO_COLOR', async () => {
    for (const noColor of [false, true]) {
      const { view } = setUp(60, noColor);
      view.stepStarted('clip', undefined);
      // The frame as drawn, before the test's sink strips its escapes.
      expect(view.frame().includes(`${ESC}[2m`)).toBe(!noColor);
    }
  });

  it('shows requests per minute against the limit, the 429s and the time elapsed in its footer', async () => {
    const { clock, frames, traffic, view } = setUp(120);
    view.stepStarted('clip', undefined);
    traffic.sent = 42;
    traffic.rateLimited = 2;
    await clock.advance(65_000);
    view.taskSubmitted('clip', 'clip', 'task_1');
    await clock.advance(200);
    expect(frames.at(-1)).toContain('42 req/min of 120 · 2 × 429 · elapsed 1m5s');
  });

  it('redraws at most ten times a second however many events arrive', async () => {
    const { clock, frames, view } = setUp();
    view.stepStarted('hero', 1000);
    for (let ms = 0; ms < 1000; ms += 10) {
      view.itemFinished('hero', ms / 10 + 1, 1000);
      await clock.advance(10);
    }
    expect(frames.length).toBeGreaterThanOrEqual(9);
    expect(frames.length).toBeLessThanOrEqual(11);
  });

  it('through log-update on a terminal: finished steps stay as lines, the final frame stays after close', async () => {
    const clock = new ManualClock();
    const stream = new FakeTty();
    const traffic = { rateLimited: 0, perMinute: () => 0, limit: () => undefined };
    const view = new LiveView({ stream, clock, traffic, redact: (t) => t.replaceAll('sk-secret', '***') });
    view.stepStarted('research', undefined);
    await clock.advance(500);
    view.stepFinished('research', 500);
    view.note('key sk-secret');
    view.stepStarted('hero', 3);
    view.itemFinished('hero', 3, 3);
    view.close();
    const screen = plain(stream.writes.join(''));
    expect(screen).toContain('✓ research 500ms\n');
    expect(screen).toContain('key ***');
    expect(screen).not.toContain('sk-secret');
    expect(screen).toMatch(/hero █{24} 3\/3 {2}0 in flight {2}ETA 0s\n0 req\/min · 0 × 429 · elapsed 500ms\n$/);
    // Nothing erases it afterwards: no timer is left to draw again.
    const written = stream.writes.length;
    await clock.advance(5000);
    expect(stream.writes.length).toBe(written);
    expect(clock.pending()).toBe(0);
  });
});

describe('plain progress lines (not a terminal)', () => {
  it('reports a fan-out every tenth of its items, and after 30 s without one', async () => {
    const clock = new ManualClock();
    const lines: string[] = [];
    const reporter = new ConsoleReporter(
      (t) => lines.push(t),
      () => clock.now(),
    );
    reporter.stepStarted('hero', 100);
    for (let done = 1; done <= 12; done++) reporter.itemFinished('hero', done, 100);
    expect(lines.filter((l) => l.includes('of 100 done'))).toEqual(['  hero: 10 of 100 done\n']);
    await clock.advance(31_000);
    reporter.itemFinished('hero', 13, 100);
    expect(lines.filter((l) => l.includes('of 100 done')).at(-1)).toBe('  hero: 13 of 100 done\n');
    reporter.itemFinished('hero', 14, 100);
    expect(lines.filter((l) => l.includes('of 100 done'))).toHaveLength(2);
  });
});
