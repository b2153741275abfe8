import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { http } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

describe('web tools', () => {
  let gateway: LocalGateway;
  let api: ReturnType<typeof http>;
  let other: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    // 2026-11-21: the corpus's newest page is from 2026-11-10.
    gateway = await startLocalGateway({
      seed: 5,
      rpm: 1000,
      keys: { a: 'team-a', b: 'team-b' },
      clock: new ManualClock(Date.UTC(2026, 10, 21)),
    });
    api = http(gateway);
    // Another server on loopback, as any site web fetch may be asked to read.
    const server = createServer((request, response) => {
      if (request.url === '/article') {
        response.setHeader('Content-Type', 'text/html; charset=utf-8');
        response.end(
          '<html><head><title>Loopback article</title></head><body><nav>Home | Shop | Login</nav><article><h1>Loopback article</h1><p>' +
            'Readable content survives extraction while navigation does not. '.repeat(8) +
            '</p></article><footer>Footer links</footer></body></html>',
        );
      } else if (request.url === '/redirect') {
        response.statusCode = 302;
        response.setHeader('Location', '/article');
        response.end();
      } else if (request.url === '/binary') {
        response.setHeader('Content-Type', 'application/octet-stream');
        response.end(Buffer.alloc(10));
      } else {
        response.statusCode = 404;
        response.end('missing');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    other = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  });
  afterAll(async () => {
    await other.close();
    await gateway.close();
  });

  describe('web search', () => {
    it('ranks pages of its own small web by a full-text index', async () => {
      const answer = await api.post('/tools/v1/web-search', { query: 'solar-powered cargo bikes' }, { key: 'a' });
      expect(answer.status).toBe(200);
      const { results } = answer.body;
      expect(answer.body).toMatchObject({ query: 'solar-powered cargo bikes', depth: 'standard', answer: null });
      expect(answer.body.request_id).toMatch(/^req_/);
      expect(results.length).toBeGreaterThan(1);
      expect(results.length).toBeLessThanOrEqual(5);
      expect(results[0]).toMatchObject({
        title: 'Solar-powered cargo bikes move from prototype to street',
        url: `${gateway.schemaUrl}/web/bikes.example/solar-cargo-bikes.html`,
        score: 1,
        published_at: '2026-09-14',
      });
      const scores = results.map((r: { score: number }) => r.score);
      expect(scores).toEqual([...scores].sort((x, y) => y - x));
      // The link is a real page that web fetch (or anyone) can read.
      expect((await fetch(results[0].url)).status).toBe(200);
    });

    it('honours depth: one sentence, three sentences, or the whole page', async () => {
      const search = async (depth: string) =>
        (await api.post('/tools/v1/web-search', { query: 'sourdough starter', depth, max_results: 1 }, { key: 'a' }))
          .body.results[0].content as string;
      const lite = await search('lite');
      const standard = await search('standard');
      const rich = await search('rich');
      expect(lite.split(/(?<=\.)\s/)).toHaveLength(1);
      expect(standard.split(/(?<=\.)\s/)).toHaveLength(3);
      expect(rich.startsWith('A sourdough starter is flour and water')).toBe(true);
      expect(rich.length).toBeGreaterThan(standard.length);
      expect(standard.length).toBeGreaterThan(lite.length);
    });

    it('honours max_results and the domain filters', async () => {
      const many = await api.post('/tools/v1/web-search', { query: 'solar', max_results: 2 }, { key: 'a' });
      expect(many.body.results).toHaveLength(2);
      const only = await api.post(
        '/tools/v1/web-search',
        { query: 'solar', include_domains: ['energy.example'], max_results: 20 },
        { key: 'a' },
      );
      expect(only.body.results.length).toBeGreaterThan(0);
      expect(only.body.results.every((r: { url: string }) => r.url.includes('/web/energy.example/'))).toBe(true);
      const without = await api.post(
        '/tools/v1/web-search',
        { query: 'solar', exclude_domains: ['energy.example', 'bikes.example'], max_results: 20 },
        { key: 'a' },
      );
      expect(without.body.results.some((r: { url: string }) => /energy\.example|bikes\.example/.test(r.url))).toBe(
        false,
      );
    });

    it('filters by topic and time range', async () => {
      const finance = await api.post(
        '/tools/v1/web-search',
        { query: 'solar prices interest rates', topic: 'finance', max_results: 20 },
        { key: 'a' },
      );
      expect(finance.body.results.length).toBeGreaterThan(0);
      expect(
        finance.body.results.every((r: { url: string }) => /finance\.example|solar-market-outlook/.test(r.url)),
      ).toBe(true);
      const lastMonth = await api.post(
        '/tools/v1/web-search',
        { query: 'cargo bikes', time_range: 'month', max_results: 20 },
        { key: 'a' },
      );
      expect(
        lastMonth.body.results
          .map((r: { published_at: string }) => r.published_at)
          .every((d: string) => d >= '2026-10-21'),
      ).toBe(true);
      expect(lastMonth.body.results.length).toBeGreaterThan(0);
    });

    it('gives a short extractive answer with include_answer', async () => {
      const answer = await api.post(
        '/tools/v1/web-search',
        { query: 'how long to steep cold brew coffee', include_answer: true },
        { key: 'a' },
      );
      expect(answer.body.answer).toBe(
        'Steep coarsely ground coffee in cold water for 12 to 18 hours, one part coffee to eight parts water, then filter.',
      );
    });

    it.each([
      [{}, 'query is required'],
      [{ query: 'x', depth: 'deep' }, 'depth must be one of lite, standard, rich (got "deep")'],
      [{ query: 'x', max_results: 21 }, 'max_results must be at most 20 (got 21)'],
      [{ query: 'x', time_range: 'decade' }, 'time_range must be one of day, week, month, year (got "decade")'],
      [{ query: 'x', country: 'germany' }, 'country must be a two-letter country code (got "germany")'],
    ])('answers 400 for %j', async (body, detail) => {
      const answer = await api.post('/tools/v1/web-search', body, { key: 'a' });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 400, message: `Invalid parameters: ${detail}` });
    });
  });

  describe('web fetch', () => {
    it('extracts the readable text of its own pages and of other loopback servers, following redirects', async () => {
      const page = `${gateway.schemaUrl}/web/design.example/logo-placement-guide.html`;
      const answer = await api.post('/tools/v1/web-fetch', { urls: [page, `${other.url}/redirect`] }, { key: 'a' });
      expect(answer.status).toBe(200);
      expect(answer.body.failed_results).toEqual([]);
      const [own, loopback] = answer.body.results;
      expect(own).toMatchObject({
        url: page,
        title: 'Where to place a logo on marketing images',
        published_at: '2026-05-27',
      });
      expect(own.content).toContain('The lower right corner is the safest place for a logo');
      expect(own.content).not.toContain('Subscribe');
      expect(own.content).not.toContain('All rights reserved');
      expect(loopback.title).toBe('Loopback article');
      expect(loopback.content).toContain('Readable content survives extraction');
      expect(loopback.content).not.toContain('Home | Shop | Login');
    });

    it('returns the URLs it cannot read in failed_results, with a 200', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const urls = [
        `${other.url}/missing`,
        `${other.url}/binary`,
        `http://127.0.0.1:${closedPort}/`,
        'ftp://example.com/file',
        'not a url',
      ];
      const answer = await api.post('/tools/v1/web-fetch', { urls }, { key: 'a' });
      expect(answer.status).toBe(200);
      expect(answer.body.results).toEqual([]);
      expect(answer.body.failed_results).toEqual([
        { url: urls[0], error: 'HTTP 404' },
        { url: urls[1], error: 'unsupported content type application/octet-stream' },
        { url: urls[2], error: 'unreachable (ECONNREFUSED)' },
        { url: urls[3], error: 'unsupported scheme ftp; only http and https are fetched' },
        { url: urls[4], error: 'not a valid URL' },
      ]);
    });

    it('takes at most 20 URLs a request', async () => {
      const answer = await api.post(
        '/tools/v1/web-fetch',
        { urls: Array.from({ length: 21 }, (_, i) => `${other.url}/${i}`) },
        { key: 'a' },
      );
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        code: 400,
        message: 'Invalid parameters: urls must have at most 20 items (got 21)',
      });
    });
  });

  it('logs every tool call of a team, newest first, and hides it from other teams', async () => {
    await api.post('/tools/v1/web-search', { query: 'golden hour' }, { key: 'b' });
    await api.post('/tools/v1/web-fetch', { urls: [`${other.url}/article`, `${other.url}/missing`] }, { key: 'b' });
    await api.post('/tools/v1/web-search', { query: 'x', depth: 'deep' }, { key: 'b' });
    const logs = await api.get('/tools/v1/logs', { key: 'b' });
    expect(logs.status).toBe(200);
    expect(logs.body.total).toBe(3);
    expect(
      logs.body.logs.map((l: { tool: string; status: string; http_status: number }) => [
        l.tool,
        l.status,
        l.http_status,
      ]),
    ).toEqual([
      ['web-search', 'failed', 400],
      ['web-fetch', 'partial', 200],
      ['web-search', 'success', 200],
    ]);
    expect(logs.body.logs[2]).toMatchObject({
      request: { query: 'golden hour' },
      result_count: 5,
      failed_count: 0,
      created_at: Date.UTC(2026, 10, 21),
    });
    expect(logs.body.logs[1]).toMatchObject({ result_count: 1, failed_count: 1 });
    const page = await api.get('/tools/v1/logs?limit=1&offset=1', { key: 'b' });
    expect(page.body.logs.map((l: { tool: string }) => l.tool)).toEqual(['web-fetch']);
    const otherTeam = await api.get('/tools/v1/logs', { key: 'a' });
    expect(otherTeam.body.logs.some((l: { request: { query?: string } }) => l.request.query === 'golden hour')).toBe(
      false,
    );
  });
});
