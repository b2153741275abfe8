import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readRecipeSchema } from '../../src/model-schemas/bundled.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { estimatePlan } from '../../src/recipe/estimate.js';
import { bundledDeps as deps } from './bundled-deps.js';

const recipes = readdirSync('recipes').filter((name) => name.endsWith('.yaml'));
const load = (name: string, extra: { batch?: { path: string; text: string }; sets?: string[] } = {}) =>
  analyze(
    { path: join('recipes', name), text: readFileSync(join('recipes', name), 'utf8'), cwd: process.cwd(), ...extra },
    deps,
  );

describe('the example recipes', () => {
  it('are the five the project ships', () => {
    expect(recipes.sort()).toEqual([
      'batch-thumbnails.yaml',
      'ci-assets.yaml',
      'fallback-model.yaml',
      'launch-kit.yaml',
      'starter.yaml',
    ]);
  });

  it.each(recipes)('%s validates against schemas/recipe.schema.json with ajv, and points editors at it', (name) => {
    const text = readFileSync(join('recipes', name), 'utf8');
    const validate = new Ajv({ strict: false }).compile(readRecipeSchema());
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(text.split('\n').find((line) => line.startsWith('# yaml-language-server:'))).toBe(
      '# yaml-language-server: $schema=../schemas/recipe.schema.json',
    );
  });

  it.each(recipes)('%s is valid to the analyzer', (name) => {
    const batch =
      name === 'batch-thumbnails.yaml'
        ? { batch: { path: 'recipes/data/thumbnails.csv', text: readFileSync('recipes/data/thumbnails.csv', 'utf8') } }
        : {};
    const result = load(name, batch);
    expect(result.ok ? '' : formatDiagnostics(result.error)).toBe('');
  });

  it('plans launch-kit as the chain it is', () => {
    const result = load('launch-kit.yaml');
    if (!result.ok) throw new Error(formatDiagnostics(result.error));
    const plan = result.value;
    expect(plan.layers).toEqual([['research'], ['read'], ['brief'], ['hero'], ['branded'], ['clip']]);
    expect(plan.steps.find((s) => s.id === 'hero')).toMatchObject({
      action: 'model',
      model: { slug: 'vendor-a/vendor-a-v3-t2i', type: 'text-to-image' },
      // The brief's schema fixes `count` prompts: the fan-out is known before the run.
      runs: [3],
      dependsOn: ['brief'],
    });
    expect(plan.steps.find((s) => s.id === 'clip')?.mediaFields.map((m) => m.field)).toEqual([
      'video_urls',
      'reference_images',
      'audio_urls',
    ]);
    expect(plan.rows).toEqual([
      { topic: 'solar-powered cargo bikes', count: 3, logo: join(process.cwd(), 'recipes/assets/logo.png') },
    ]);
    const estimate = estimatePlan(plan, { rpm: 60, concurrency: 4 });
    expect(estimate.totals.requests).toEqual({
      submissions: 5,
      polls: 5,
      uploads: 2,
      tool_calls: 2,
      text_calls: 1,
      total: 15,
      dynamic_steps: [],
    });
    expect(estimate.totals.tasks).toEqual({
      'vendor-a/vendor-a-v3-t2i': 3,
      'vendor-b/vendor-b-5.0-lite-edit': 1,
      'vendor-b/vendor-b-2.0-mini-v2v': 1,
    });
  });

  it('plans one run per batch row, and known for_each lists', () => {
    const batch = load('batch-thumbnails.yaml', {
      batch: { path: 'recipes/data/thumbnails.csv', text: readFileSync('recipes/data/thumbnails.csv', 'utf8') },
    });
    if (!batch.ok) throw new Error(formatDiagnostics(batch.error));
    expect(batch.value.rows).toHaveLength(6);
    expect(batch.value.rows.at(3)).toEqual({
      title: 'Crossing Europe by night train',
      style: 'moody cinematic still',
      aspect_ratio: '21:9',
    });
    expect(estimatePlan(batch.value).totals.tasks).toEqual({ 'vendor-a/vendor-a-v3-t2i': 6 });
    const ci = load('ci-assets.yaml', { sets: ['palette=["red","blue"]'] });
    if (!ci.ok) throw new Error(formatDiagnostics(ci.error));
    expect(ci.value.steps.find((s) => s.id === 'backgrounds')?.runs).toEqual([2]);
    const estimate = estimatePlan(ci.value, { rpm: 10, concurrency: 2 });
    // 2 backgrounds + 1 icon: 3 submissions, 3 polls and 1 upload of the logo are 7 requests: 42 s at 10 a minute.
    expect(estimate.totals.requests.total).toBe(7);
    expect(estimate.totals.least_wall_ms).toBe(42_000);
  });
});

describe('recipe.schema.json', () => {
  it('has a markdownDescription on every field', () => {
    const missing: string[] = [];
    const visit = (node: unknown, path: string) => {
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Record<string, unknown>;
      if (typeof schema.properties === 'object' && schema.properties !== null) {
        for (const [key, child] of Object.entries(schema.properties)) {
          if (typeof (child as Record<string, unknown>).markdownDescription !== 'string')
            missing.push(`${path}.${key}`);
          visit(child, `${path}.${key}`);
        }
      }
      if (typeof schema.additionalProperties === 'object') {
        if (typeof (schema.additionalProperties as Record<string, unknown>).markdownDescription !== 'string')
          missing.push(`${path}.*`);
        visit(schema.additionalProperties, `${path}.*`);
      }
    };
    visit(readRecipeSchema(), '');
    expect(missing).toEqual([]);
  });
});
