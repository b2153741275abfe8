import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { http } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';
import { bundledDeps } from './bundled-deps.js';

/** A recipe whose one step sends `body` to a tool, written as YAML flow (JSON is YAML). */
const recipeFor = (tool: string, body: unknown) =>
  `version: 1\nname: tools\nsteps:\n  s:\n    uses: ${tool}\n    with: ${JSON.stringify(body)}\n`;
const analyzeRecipe = (text: string) => analyze({ path: 'recipes/tools.yaml', text, cwd: process.cwd() }, bundledDeps);
const domains = (n: number) => Array.from({ length: n }, (_, i) => `d${i}.example`);

describe('the analyzer and the gateway read the same tool request schemas', () => {
  let gateway: LocalGateway;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    gateway = await startLocalGateway({
      seed: 5,
      rpm: 1000,
      keys: { a: 'team-a' },
      clock: new ManualClock(Date.UTC(2026, 10, 21)),
    });
    api = http(gateway);
  });
  afterAll(async () => {
    await gateway.close();
  });

  it.each(['include_domains', 'exclude_domains'])(
    '%s: 51 domains are a diagnostic at validate time and a 400 from the gateway',
    async (field) => {
      const body = { query: 'solar', [field]: domains(51) };
      const analyzed = analyzeRecipe(recipeFor('web-search', body));
      expect(analyzed.ok).toBe(false);
      if (!analyzed.ok)
        expect(formatDiagnostics(analyzed.error)).toMatch(
          new RegExp(`^recipes/tools\\.yaml:6:\\d+: error: ${field} must have at most 50 items, got 51\\n`),
        );
      const answer = await api.post('/tools/v1/web-search', body, { key: 'a' });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain(field);
    },
  );

  it('50 domains pass both', async () => {
    const body = { query: 'solar', include_domains: domains(50) };
    const analyzed = analyzeRecipe(recipeFor('web-search', body));
    expect(analyzed.ok ? '' : formatDiagnostics(analyzed.error)).toBe('');
    expect((await api.post('/tools/v1/web-search', body, { key: 'a' })).status).toBe(200);
  });

  it('a web-fetch step may name more than the 20 URLs one request takes: the client sends them 20 at a time', async () => {
    const body = { urls: Array.from({ length: 21 }, (_, i) => `http://127.0.0.1:9/${i}`) };
    const analyzed = analyzeRecipe(recipeFor('web-fetch', body));
    expect(analyzed.ok ? '' : formatDiagnostics(analyzed.error)).toBe('');
    expect((await api.post('/tools/v1/web-fetch', body, { key: 'a' })).status).toBe(400);
  });

  it('an empty URL is refused by both', async () => {
    const body = { urls: [''] };
    const analyzed = analyzeRecipe(recipeFor('web-fetch', body));
    expect(analyzed.ok ? '' : formatDiagnostics(analyzed.error)).toMatch(/error: urls\[0\] /);
    expect((await api.post('/tools/v1/web-fetch', body, { key: 'a' })).status).toBe(400);
  });
});
