import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ActionCards } from '../../src/actions/cards.js';
import type { ActionDurations } from '../../src/actions/durations.js';
import { type ActionPlans, PLANNERS } from '../../src/actions/planners.js';
import type { ActionRuns } from '../../src/actions/runners.js';
import { ACTION_KINDS, ACTIONS, type ActionDefinition } from '../../src/actions/registry.js';
import { probeFile } from '../../src/files/probe.js';
import { readBundledSchema, readRecipeLanguageSchemas } from '../../src/model-schemas/bundled.js';
import type { ActionKind, LlmStep, ModelStep, PlannedStep, RunStep } from '../../src/plan.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';

const actionsDir = join(import.meta.dirname, '..', '..', 'src', 'actions');

/**
 * The parts an action lacks: each part present, and each of its hooks a function (or its data
 * the right type). What the type system checks for a registry typed in TypeScript, this checks
 * for what is there at run time (a part left `undefined as never`, a hook of the wrong name).
 */
function missingParts(definition: ActionDefinition<PlannedStep>): string[] {
  const needs: Record<string, Record<string, 'function' | 'boolean' | 'object'>> = {
    duration: { kindOf: 'function', expected: 'object' },
    plan: {
      claims: 'function',
      draft: 'function',
      plan: 'function',
      estimate: 'function',
      price: 'function',
      sendsRequests: 'boolean',
      retriesByDefault: 'boolean',
      cache: 'object',
    },
    run: { render: 'function', run: 'function', onWorkers: 'function', timedFromSlot: 'boolean', cache: 'object' },
    card: { view: 'function', media: 'boolean' },
  };
  const missing: string[] = [];
  for (const [part, hooks] of Object.entries(needs)) {
    const value = (definition as unknown as Record<string, Record<string, unknown> | undefined>)[part];
    if (typeof value !== 'object' || value === null) {
      missing.push(part);
      continue;
    }
    for (const [hook, type] of Object.entries(hooks))
      if (typeof value[hook] !== type || value[hook] === null) missing.push(`${part}.${hook}`);
  }
  const caching = definition.run?.cache as unknown as Record<string, unknown> | undefined;
  for (const hook of ['keyAction', 'cost'])
    if (caching && typeof caching[hook] !== 'function') missing.push(`run.cache.${hook}`);
  return missing;
}

const RECIPE = `version: 1
name: one-of-each
steps:
  search:
    uses: web-search
    with: { query: cats }
  fetch:
    uses: web-fetch
    with: { urls: ["https://example.com/"] }
  ask:
    uses: llm
    with: { model: acme/chat-1, prompt: hello }
  send:
    uses: upload
    with: { path: recipe.yaml }
  image:
    uses: vendor-a/vendor-a-v3-t2i
    with: { prompt: a cat }
  list:
    run: ls
`;

describe('every action is one module with all its parts', () => {
  it('has a definition for every kind of planned step, each with every part and hook', () => {
    expect([...ACTION_KINDS].sort()).toEqual(['llm', 'model', 'run', 'upload', 'web-fetch', 'web-search']);
    for (const kind of ACTION_KINDS)
      expect(missingParts(ACTIONS[kind] as unknown as ActionDefinition<PlannedStep>), kind).toEqual([]);
  });

  it('finds a part or a hook an action lacks', () => {
    const llm = ACTIONS.llm as unknown as ActionDefinition<PlannedStep>;
    expect(missingParts({ ...llm, card: undefined } as never)).toEqual(['card']);
    expect(missingParts({ ...llm, run: { ...llm.run, render: undefined } } as never)).toEqual(['run.render']);
    const noKey = { ...llm, run: { ...llm.run, cache: { ...llm.run.cache, keyAction: undefined } } };
    expect(missingParts(noKey as never)).toEqual(['run.cache.keyAction']);
  });

  it('keeps each action in its own folder, named by its kind', () => {
    const folders = readdirSync(actionsDir, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(folders.map((folder) => folder.name).sort()).toEqual([...ACTION_KINDS].sort());
  });

  it('names each action by one `uses:` only: a built-in by its kind, a model by its slug, a command by none', () => {
    for (const kind of ACTION_KINDS) {
      const claimants = ACTION_KINDS.filter((other) => ACTIONS[other].plan.claims(kind));
      expect(claimants, kind).toEqual(kind === 'model' || kind === 'run' ? [] : [kind]);
    }
    expect(ACTION_KINDS.filter((kind) => ACTIONS[kind].plan.claims('acme/flux'))).toEqual(['model']);
    expect(ACTION_KINDS.filter((kind) => ACTIONS[kind].plan.claims(undefined))).toEqual(['run']);
  });

  it('plans each step as its action’s variant, with only that action’s own fields', () => {
    const result = analyze(
      { path: join(actionsDir, 'recipe.yaml'), text: RECIPE, cwd: process.cwd() },
      {
        modelSchema: readBundledSchema,
        schemas: readRecipeLanguageSchemas(),
        // The upload's file: there, as far as the analyzer is told.
        probe: (path) => (path.endsWith('recipe.yaml') ? { size: 10 } : probeFile(path)),
      },
    );
    if (!result.ok) throw new Error(formatDiagnostics(result.error));
    const own = Object.fromEntries(
      result.value.steps.map((step) => {
        const fields = ['action', 'with', 'model', 'run', 'runsOn'].filter((key) => key in step);
        return [step.id, fields];
      }),
    );
    expect(own).toEqual({
      search: ['action', 'with'],
      fetch: ['action', 'with'],
      ask: ['action', 'with'],
      send: ['action', 'with'],
      image: ['action', 'with', 'model'],
      list: ['action', 'run', 'runsOn'],
    });
    const image = result.value.steps.find((step) => step.id === 'image');
    expect(image?.action === 'model' && image.model).toEqual({
      slug: 'vendor-a/vendor-a-v3-t2i',
      type: 'text-to-image',
    });
  });

  it('is typed so that a registry missing a kind, or a variant with another’s field, does not compile', () => {
    expectTypeOf<keyof ActionPlans>().toEqualTypeOf<ActionKind>();
    expectTypeOf<keyof ActionRuns>().toEqualTypeOf<ActionKind>();
    expectTypeOf<keyof ActionCards>().toEqualTypeOf<ActionKind>();
    expectTypeOf<keyof ActionDurations>().toEqualTypeOf<ActionKind>();
    expectTypeOf<RunStep>().not.toHaveProperty('model');
    expectTypeOf<RunStep>().not.toHaveProperty('with');
    expectTypeOf<ModelStep>().not.toHaveProperty('run');
    expectTypeOf<ModelStep>().not.toHaveProperty('runsOn');
    expectTypeOf<LlmStep>().not.toHaveProperty('model');
    const { run: _run, ...withoutRun } = PLANNERS;
    // @ts-expect-error: a registry of plan parts without one for `run` is refused.
    const planners: ActionPlans = withoutRun;
    // @ts-expect-error: a planned step has a model only once it is known to be a model step.
    const slugOf = (step: PlannedStep) => step.model.slug;
    expect([planners, slugOf].length).toBe(2);
  });
});
