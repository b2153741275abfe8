import { request as rawRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '../../src/local-gateway/index.js';
import { http } from '../support/http.js';

const T2I = '/api/v1/vendor-a/vendor-a-v3-t2i';
const T2I_ROUTE = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(options: LocalGatewayOptions = {}) {
  gateway = await startLocalGateway({ seed: 9, latencyScale: 0, ...options });
  return { gateway, api: http(gateway) };
}

/** A POST whose answer may never come: resolves with the status, or with the socket error. */
function post(
  gw: LocalGateway,
  path: string,
  body: unknown,
): Promise<{ status?: number; error?: string; body?: string }> {
  return new Promise((resolve) => {
    const req = rawRequest(
      `${gw.schemaUrl}${path}`,
      { method: 'POST', headers: { Authorization: `Bearer ${gw.apiKey}`, 'Content-Type': 'application/json' } },
      (res) => {
        let data = '';
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: data }));
        res.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
      },
    );
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end(JSON.stringify(body));
  });
}

describe('faults on demand', () => {
  it('drop-after: the task is created and charged, and the connection closes without an answer', async () => {
    const { gateway: gw } = await start();
    gw.injectFault({ kind: 'drop-after', route: T2I_ROUTE });
    const outcome = await post(gw, T2I, { prompt: 'lost answer' });
    expect(outcome.error).toBe('ECONNRESET');
    await gw.settle();
    expect(gw.stats().tasks.submitted).toEqual({ 'vendor-a/vendor-a-v3-t2i': 1 });
    expect(gw.stats().balances.local).toBe(99.97);
    expect(gw.stats().faults_injected).toEqual({ 'drop-after': 1 });
    // The fault fired once; the next submission is answered.
    expect((await post(gw, T2I, { prompt: 'answered' })).status).toBe(200);
  });

  it('drop-before: the connection closes and nothing is created', async () => {
    const { gateway: gw } = await start();
    gw.injectFault({ kind: 'drop-before', route: T2I_ROUTE });
    expect((await post(gw, T2I, { prompt: 'never seen' })).error).toBe('ECONNRESET');
    expect(gw.stats().tasks.submitted).toEqual({});
  });

  it('status: answers the given error status with the error body, as many times as asked, over HTTP too', async () => {
    const { api, gateway: gw } = await start();
    const added = await api.post(
      '/__emulator/faults',
      { kind: 'status', status: 503, route: 'GET /api/v1/team/balance', times: 2 },
      { key: null },
    );
    expect(added.body).toEqual({
      faults: [{ kind: 'status', status: 503, route: 'GET /api/v1/team/balance', times: 2 }],
    });
    for (let i = 0; i < 2; i++)
      expect((await api.get('/api/v1/team/balance')).body).toEqual({
        code: 503,
        message: 'Service unavailable: injected fault 503',
      });
    expect((await api.get('/api/v1/team/balance')).status).toBe(200);
    gw.injectFault({ kind: 'status', status: 500 });
    expect((await api.get('/api/v1/models')).body).toEqual({
      code: 500,
      message: 'Internal server error: injected fault 500',
    });
    // A 429 says when to retry, as the rate limiter's own does: the seconds left in the key's window.
    gw.injectFault({ kind: 'status', status: 429 });
    const limited = await api.get('/api/v1/models');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it('body_contains: strikes only the requests whose body holds the text', async () => {
    const { gateway: gw } = await start();
    gw.injectFault({ kind: 'status', status: 400, route: T2I_ROUTE, body_contains: 'item 3 ' });
    const answers = await Promise.all(
      [1, 3, 13].map((i) => post(gw, T2I, { prompt: `item ${i} of five` }).then((r) => r.status)),
    );
    expect(answers).toEqual([200, 400, 200]);
    // Used up: the same body now goes through.
    expect((await post(gw, T2I, { prompt: 'item 3 again' })).status).toBe(200);
    expect(() => gw.injectFault({ kind: 'status', status: 400, body_contains: '' })).toThrow(/body_contains/);
  });

  it('malformed-json: answers 200 with a cut-off body, after the task was created', async () => {
    const { gateway: gw } = await start();
    gw.injectFault({ kind: 'malformed-json', route: T2I_ROUTE });
    const outcome = await post(gw, T2I, { prompt: 'garbled' });
    expect(outcome.status).toBe(200);
    expect(() => JSON.parse(outcome.body!)).toThrow();
    expect(gw.stats().tasks.submitted).toEqual({ 'vendor-a/vendor-a-v3-t2i': 1 });
  });

  it('delay: holds the answer for delay_ms of real time', async () => {
    const { api, gateway: gw } = await start();
    gw.injectFault({ kind: 'delay', delay_ms: 300, route: 'GET /api/v1/team/balance' });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 100);
    await expect(
      fetch(`${gw.baseUrl}/team/balance`, {
        headers: { Authorization: `Bearer ${gw.apiKey}` },
        signal: controller.signal,
      }),
    ).rejects.toThrow(/abort/i);
    clearTimeout(timer);
    expect((await api.get('/api/v1/team/balance')).status).toBe(200);
  });

  it('refuses a malformed fault with 400', async () => {
    const { api } = await start();
    const answer = await api.post('/__emulator/faults', { kind: 'explode' }, { key: null });
    expect(answer.body).toEqual({
      code: 400,
      message:
        'Invalid parameters: fault kind must be one of status, drop-before, drop-after, delay, malformed-json (got "explode")',
    });
    expect((await api.send('DELETE', '/__emulator/faults', { key: null })).status).toBe(204);
  });

  it('--error-rate answers a reproducible share of requests with 500 or 503', async () => {
    const counts = async () => {
      const { api, gateway: gw } = await start({ errorRate: 0.3, rpm: 1000 });
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) statuses.push((await api.get('/api/v1/team/balance')).status);
      await gw.close();
      gateway = undefined;
      return statuses;
    };
    const first = await counts();
    const failures = first.filter((s) => s !== 200);
    expect(failures.length).toBeGreaterThan(30);
    expect(failures.length).toBeLessThan(90);
    expect(new Set(failures)).toEqual(new Set([500, 503]));
    // The same seed gives the same answers.
    expect(await counts()).toEqual(first);
  });
});

describe('GET /__emulator/stats', () => {
  it('counts requests by route, status and team, tasks, rate limiting and balances', async () => {
    const { api, gateway: gw } = await start({ rpm: 4, keys: { a: 'team-a', b: 'team-b' }, maxConcurrent: 2 });
    await api.post(T2I, { prompt: 'one' }, { key: 'a' });
    await api.post(`${T2I}/async`, { prompt: 'two', n: 2 }, { key: 'a' });
    await api.post(T2I, { prompt: '' }, { key: 'a' });
    await api.get('/api/v1/team/balance', { key: 'a' });
    await api.get('/api/v1/team/balance', { key: 'a' });
    await api.get('/api/v1/team/balance', { key: 'nope' });
    await api.get('/api/v1/models', { key: 'b' });
    await gw.settle();
    const answer = await api.get('/__emulator/stats', { key: null });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      requests: {
        total: 7,
        by_route: {
          [T2I_ROUTE]: 2,
          'POST /api/v1/{provider}/{model_id}/async': 1,
          'GET /api/v1/team/balance': 3,
          'GET /api/v1/models': 1,
        },
        by_status: { '200': 4, '400': 1, '401': 1, '429': 1 },
        by_team: { 'team-a': 5, 'team-b': 1 },
      },
      rate_limited: 1,
      rate_limited_by_team: { 'team-a': 1 },
      tasks: {
        submitted: { 'vendor-a/vendor-a-v3-t2i': 2 },
        finished: { success: 2, failed: 0 },
        running: { 'team-a': 0 },
        max_running: { 'team-a': 2 },
      },
      webhooks: { delivered: 0, failed: 0, attempts: 0 },
      faults_injected: {},
      balances: { 'team-a': 99.91, 'team-b': 100 },
    });
  });
});
