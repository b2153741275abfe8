import diagnostics from 'node:diagnostics_channel';
import { setImmediate as nextTurn, setTimeout as realDelay } from 'node:timers/promises';
import sharp from 'sharp';
import type { ManualClock } from './manual-clock.js';

/**
 * Native handles that stand for real I/O under way: a child process, a file operation, a TCP
 * connection being opened, a DNS lookup. Idle sockets, pipes and real timers are left out: a
 * keep-alive socket or the test runner's own channel says nothing about the work.
 */
const REAL_IO = new Set([
  'ProcessWrap',
  'FSReqCallback',
  'FSReqPromise',
  // A FileHandle closing (the end of fs/promises' writeFile): alone for a turn, and under load for
  // more than the grace period, when the clock had moved on before the work's next file operation.
  'CloseReq',
  'ConnectWrap',
  'TCPConnectWrap',
  'GetAddrInfoReqWrap',
]);

/**
 * The HTTP requests made through undici (which `fetch` and the gateway client use) from their
 * creation until their answer is complete or they fail, read from undici's diagnostics channels.
 * Watched from the start, so that a request made before a run begins is counted too.
 */
const httpRequestsOpen = new Set<unknown>();
const requestOf = (message: unknown) => (message as { request: unknown }).request;
diagnostics.subscribe('undici:request:create', (message) => httpRequestsOpen.add(requestOf(message)));
for (const name of ['undici:request:trailers', 'undici:request:error']) {
  diagnostics.subscribe(name, (message) => httpRequestsOpen.delete(requestOf(message)));
}

export interface TimeSkippingOptions {
  /** Work the clock must wait for, by name (for the failure message): each is true while under way. */
  busy?: Record<string, () => boolean>;
  /** The farthest one skip may move the clock; a farther next timer fails the run. Default 5 minutes. */
  maxSkipMs?: number;
  /** Event-loop turns with nothing under way before a skip, for work no check can see. Default 5. */
  graceTurns?: number;
  /** Then real time with nothing under way before a skip. Default 5 ms. */
  graceMs?: number;
  /** Real time with nothing under way before a far next timer, or none, fails the run. Default 500 ms. */
  confirmMs?: number;
  /** Real time the work may stay busy while the clock stands still, before the run fails. Default 20 s. */
  stallMs?: number;
}

/** The usual checks: requests the client has sent and not had answered, requests the gateway is handling. */
export function requestsInFlight(sides: {
  budget?: { snapshot(): { unanswered: number } };
  gateway?: { inFlight(): number };
}): Record<string, () => boolean> {
  const checks: Record<string, () => boolean> = {};
  const { budget, gateway } = sides;
  if (budget) checks['requests the client sent and has no answer to'] = () => budget.snapshot().unanswered > 0;
  if (gateway) checks['requests the gateway is handling'] = () => gateway.inFlight() > 0;
  return checks;
}

/**
 * Runs `work` to completion on a manual clock shared by everything under test, the way a
 * time-skipping test environment does: whenever nothing is under way (no check in `busy` holds,
 * no HTTP request made in this process is unanswered, no real I/O is pending, and a few turns and
 * milliseconds of real time confirm it), the clock jumps to the next timer. Instead of hanging it
 * fails, saying what it saw, when the next timer is too far or nothing at all is pending though
 * the work has not settled (each after `confirmMs` of quiet), or when the work stays busy too long
 * in real time. A child process the test leaves running counts as real I/O and keeps the clock
 * still, so tests that spawn long-lived processes keep real time.
 */
export async function runSkippingTime<T>(
  clock: ManualClock,
  work: Promise<T>,
  options: TimeSkippingOptions = {},
): Promise<T> {
  const { maxSkipMs = 5 * 60_000, graceTurns = 5, graceMs = 5, confirmMs = 500, stallMs = 20_000 } = options;
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const busy = {
    ...options.busy,
    'HTTP requests made in this process and not yet answered': () => httpRequestsOpen.size > 0,
    // libvips works on threads of its own, which no native handle shows: the local gateway's image
    // edits and the report's thumbnails.
    'images libvips is drawing': () => {
      const { queue, process } = sharp.counters();
      return queue + process > 0;
    },
  };
  const start = clock.now();
  const where = () => describeClock(clock, start);
  let stillSince = performance.now();
  let quietSince: number | undefined;
  while (!settled) {
    const underWay = busyNow(busy);
    if (underWay.length > 0) {
      quietSince = undefined;
      if (performance.now() - stillSince > stallMs) {
        const waitedFor = underWay.join('; ');
        throw new Error(`time-skipping: still waiting after ${stallMs} ms of real time for: ${waitedFor} (${where()})`);
      }
      await realDelay(1);
      continue;
    }
    if (!(await staysQuiet(busy, graceTurns, graceMs, () => settled))) continue;
    quietSince ??= performance.now();
    const due = clock.nextDue();
    const stuck = due === undefined || due - clock.now() > maxSkipMs;
    // Real I/O no check sees may still end the wait; give it a while before calling the run stuck.
    if (stuck && performance.now() - quietSince < confirmMs) continue;
    if (due === undefined) {
      const checked = [...Object.keys(busy), 'real I/O'].join(', ');
      throw new Error(
        `time-skipping: the work has not settled, yet nothing is pending: no timer, and nothing under way ` +
          `(checked: ${checked}) (${where()})`,
      );
    }
    if (stuck) {
      throw new Error(
        `time-skipping: nothing is under way and the next timer is due in ${due - clock.now()} ms, ` +
          `beyond the ${maxSkipMs} ms one skip may cover (${where()})`,
      );
    }
    quietSince = undefined;
    await clock.advance(due - clock.now());
    stillSince = performance.now();
  }
  return work;
}

/** What is under way now, by name. */
function busyNow(busy: Record<string, () => boolean>): string[] {
  const names = Object.entries(busy)
    .filter(([, check]) => check())
    .map(([name]) => name);
  const io = process.getActiveResourcesInfo().filter((type) => REAL_IO.has(type));
  if (io.length > 0) names.push(`real I/O (${io.join(', ')})`);
  return names;
}

/** True when nothing starts over a few event-loop turns and `graceMs` of real time, and the work is still unsettled. */
async function staysQuiet(
  busy: Record<string, () => boolean>,
  turns: number,
  graceMs: number,
  settled: () => boolean,
): Promise<boolean> {
  for (let turn = 0; turn < turns; turn++) {
    await nextTurn();
    if (settled() || busyNow(busy).length > 0) return false;
  }
  await realDelay(graceMs);
  await nextTurn();
  return !settled() && busyNow(busy).length === 0;
}

function describeClock(clock: ManualClock, start: number): string {
  const now = clock.now();
  const dues = clock.dues();
  const shown = dues.slice(0, 8).map((due) => `+${due - now} ms`);
  if (dues.length > shown.length) shown.push(`and ${dues.length - shown.length} more`);
  const timers = dues.length > 0 ? `pending timers due in ${shown.join(', ')}` : 'no pending timers';
  return `clock at ${new Date(now).toISOString()}, ${now - start} ms after the start; ${timers}`;
}
