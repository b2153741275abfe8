import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../src/clock.js';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { ManualClock } from './manual-clock.js';
import { requestsInFlight, runSkippingTime } from './time-skipping.js';

const START = Date.UTC(2026, 10, 21, 12, 0, 0);

/** Waits on real I/O until `ready` holds. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 1));
}

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('runSkippingTime', () => {
  it('moves the clock to each next timer in turn, firing each at its own moment', async () => {
    const clock = new ManualClock(START);
    const firedAt: number[] = [];
    clock.setTimer(1000, () => firedAt.push(clock.now()));
    const work = sleep(clock, 3000).then(() => clock.now());
    expect(await runSkippingTime(clock, work)).toBe(START + 3000);
    expect(firedAt).toEqual([START + 1000]);
  });

  it('does not move the clock while a check says work is under way', async () => {
    const clock = new ManualClock(START);
    let busy = true;
    let looks = 0;
    const work = sleep(clock, 1000);
    const running = runSkippingTime(clock, work, {
      busy: {
        'a request': () => {
          looks++;
          return busy;
        },
      },
    });
    await until(() => looks >= 20);
    expect(clock.now()).toBe(START);
    busy = false;
    await running;
    expect(clock.now()).toBe(START + 1000);
  });

  it('does not move the clock while a child process the work started is running', async () => {
    const clock = new ManualClock(START);
    clock.setTimer(1000, () => undefined);
    const work = (async () => {
      await promisify(execFile)(process.execPath, ['-e', 'setTimeout(() => {}, 50)']);
      return clock.now();
    })();
    expect(await runSkippingTime(clock, work)).toBe(START);
  });

  it('does not move the clock while a file operation the work started is pending', async () => {
    const clock = new ManualClock(START);
    clock.setTimer(1000, () => undefined);
    const dir = await mkdtemp(join(tmpdir(), 'time-skipping-'));
    const work = (async () => {
      await writeFile(join(dir, 'big.bin'), Buffer.alloc(32 * 1024 * 1024));
      await rm(dir, { recursive: true, force: true });
      return clock.now();
    })();
    expect(await runSkippingTime(clock, work)).toBe(START);
  });

  it('does not move the clock while an HTTP request made in this process waits for its answer', async () => {
    const clock = new ManualClock(START);
    clock.setTimer(1000, () => undefined);
    const server = createServer((_request, response) => void setTimeout(() => response.end('late'), 100));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const work = (async () => {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      return { text: await answer.text(), at: clock.now() };
    })();
    try {
      expect(await runSkippingTime(clock, work)).toEqual({ text: 'late', at: START });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('waits while the client has a request unanswered and while the gateway handles it', async () => {
    const clock = new ManualClock(START);
    gateway = await startLocalGateway({ clock, latencyScale: 0 });
    const gw = gateway;
    gw.injectFault({ kind: 'delay', delay_ms: 100, route: 'GET /api/v1/models' });
    clock.setTimer(1000, () => undefined);
    let unanswered = 0;
    const handling: number[] = [];
    const work = (async () => {
      unanswered++;
      const answer = await fetch(`${gw.baseUrl}/models`, { headers: { Authorization: `Bearer ${gw.apiKey}` } });
      await answer.text();
      unanswered--;
      return { status: answer.status, at: clock.now() };
    })();
    const busy = requestsInFlight({ budget: { snapshot: () => ({ unanswered }) }, gateway: gw });
    const gatewayCheck = busy['requests the gateway is handling']!;
    busy['requests the gateway is handling'] = () => {
      handling.push(gw.inFlight());
      return gatewayCheck();
    };
    expect(await runSkippingTime(clock, work, { busy })).toEqual({ status: 200, at: START });
    expect(handling).toContain(1);
  });

  it('fails, naming the clock time and the timers, when the next timer is beyond one skip', async () => {
    const clock = new ManualClock(START);
    const work = sleep(clock, 10 * 60_000);
    await expect(runSkippingTime(clock, work)).rejects.toThrow(
      'time-skipping: nothing is under way and the next timer is due in 600000 ms, ' +
        'beyond the 300000 ms one skip may cover ' +
        '(clock at 2026-11-21T12:00:00.000Z, 0 ms after the start; pending timers due in +600000 ms)',
    );
    expect(clock.now()).toBe(START);
  });

  it('fails, saying what it checked, when nothing is pending but the work never settles', async () => {
    const clock = new ManualClock(START);
    const work = sleep(clock, 500).then(() => new Promise<never>(() => undefined));
    await expect(runSkippingTime(clock, work, { busy: { 'a request': () => false } })).rejects.toThrow(
      'time-skipping: the work has not settled, yet nothing is pending: no timer, and nothing under way ' +
        '(checked: a request, HTTP requests made in this process and not yet answered, images libvips is drawing, real I/O) ' +
        '(clock at 2026-11-21T12:00:00.500Z, 500 ms after the start; no pending timers)',
    );
  });

  it('fails, naming what it waited for, when the work stays busy too long in real time', async () => {
    const clock = new ManualClock(START);
    const work = sleep(clock, 500);
    const stalled = runSkippingTime(clock, work, { busy: { 'a request that never ends': () => true }, stallMs: 50 });
    await expect(stalled).rejects.toThrow(
      'time-skipping: still waiting after 50 ms of real time for: a request that never ends ' +
        '(clock at 2026-11-21T12:00:00.000Z, 0 ms after the start; pending timers due in +500 ms)',
    );
  });

  it('passes on the work’s own failure', async () => {
    const clock = new ManualClock(START);
    const work = sleep(clock, 100).then(() => Promise.reject(new Error('the work failed')));
    await expect(runSkippingTime(clock, work)).rejects.toThrow('the work failed');
  });
});

describe("the local gateway's count of requests in flight", () => {
  it('counts a request from its arrival until it is answered, or its connection dropped', async () => {
    gateway = await startLocalGateway({ latencyScale: 0 });
    const gw = gateway;
    const models = () => fetch(`${gw.baseUrl}/models`, { headers: { Authorization: `Bearer ${gw.apiKey}` } });
    expect(gw.inFlight()).toBe(0);
    gw.injectFault({ kind: 'delay', delay_ms: 300, route: 'GET /api/v1/models' });
    const held = models();
    await until(() => gw.inFlight() === 1);
    expect((await held).status).toBe(200);
    await until(() => gw.inFlight() === 0);
    gw.injectFault({ kind: 'drop-before', route: 'GET /api/v1/models' });
    await expect(models()).rejects.toThrow();
    await until(() => gw.inFlight() === 0);
    expect(gw.stats().requests.by_route['GET /api/v1/models']).toBe(2);
  });
});
