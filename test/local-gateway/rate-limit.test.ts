import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { http } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

describe('rate limits per key', () => {
  let gateway: LocalGateway | undefined;
  afterEach(() => gateway?.close());

  it('puts X-RateLimit-* on every answer and refuses the request after the limit with the decided 429', async () => {
    // 12:00:10 UTC: the 60-second window began at 12:00:00 and resets at 12:01:00.
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 10));
    gateway = await startLocalGateway({ rpm: 3, clock, latencyScale: 0 });
    const api = http(gateway);
    const resetSeconds = String(Date.UTC(2026, 10, 21, 12, 1, 0) / 1000);
    const paths = ['/api/v1/team/balance', '/tools/v1/logs', '/api/v1/media/files'];
    for (const [i, path] of paths.entries()) {
      const answer = await api.get(path);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).toBe('3');
      expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      expect(answer.headers.get('x-ratelimit-reset')).toBe(resetSeconds);
    }
    const refused = await api.post('/api/v1/vendor-a/vendor-a-v3-t2i', { prompt: 'a' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 429,
      message: 'Rate limit exceeded: 3 requests per minute, retry after 50 seconds',
    });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(resetSeconds);
    expect(refused.headers.get('retry-after')).toBe('50');
    // The refused submission created no task.
    expect(gateway.stats().tasks.submitted).toEqual({});
    expect(gateway.stats().rate_limited).toBe(1);
    expect(gateway.stats().rate_limited_by_team).toEqual({ local: 1 });

    await clock.advance(49_999);
    expect((await api.get('/api/v1/team/balance')).status).toBe(429);
    await clock.advance(1);
    const fresh = await api.get('/api/v1/team/balance');
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('counts each key on its own and words other window lengths', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    gateway = await startLocalGateway({ rpm: 2, windowSeconds: 5, clock, keys: { one: 'team-1', two: 'team-2' } });
    const api = http(gateway);
    await api.get('/api/v1/team/balance', { key: 'one' });
    await api.get('/api/v1/team/balance', { key: 'one' });
    const refused = await api.get('/api/v1/team/balance', { key: 'one' });
    expect(refused.body.message).toBe('Rate limit exceeded: 2 requests per 5 seconds, retry after 5 seconds');
    expect((await api.get('/api/v1/team/balance', { key: 'two' })).status).toBe(200);
    expect(gateway.stats().rate_limited_by_team).toEqual({ 'team-1': 1 });
  });

  it('limits the tool and text endpoints with the same budget as the media API', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ rpm: 2, clock });
    const api = http(gateway);
    expect((await api.post('/tools/v1/web-search', { query: 'solar' })).status).toBe(200);
    expect(
      (await api.post('/llm/v1/chat/completions', { model: 'a/b', messages: [{ role: 'user', content: 'hi' }] }))
        .status,
    ).toBe(200);
    expect((await api.get('/api/v1/apikey/validate')).status).toBe(429);
  });

  it('does not limit the public paths', async () => {
    const clock = new ManualClock();
    gateway = await startLocalGateway({ rpm: 1, clock });
    const api = http(gateway);
    for (let i = 0; i < 5; i++) {
      expect((await api.get('/models/vendor-a/vendor-a-v3-t2i/api_schema', { key: null })).status).toBe(200);
      expect((await api.get('/web/', { key: null })).status).toBe(200);
      expect((await api.get('/__emulator/stats', { key: null })).status).toBe(200);
    }
  });
});
