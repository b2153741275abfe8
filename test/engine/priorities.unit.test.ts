import { describe, expect, it } from 'vitest';
import { probeFile } from '../../src/files/probe.js';
import { readBundledSchema, readRecipeLanguageSchemas } from '../../src/model-schemas/bundled.js';
import { taskPriority } from '../../src/engine/priorities.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';

/** Images → an edit of each image → a video of each edit, and a sheet that reads every image. */
const recipe = (settings = '') => `version: 1
name: chain
${settings}inputs:
  colours: { type: array, default: [red, green, blue] }
steps:
  bg:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} background" }
  badge:
    uses: vendor-b/vendor-b-5.0-lite-edit
    for_each: \${{ steps.bg.outputs[*].images[0].url }}
    with: { prompt: add a badge, image: ["\${{ item }}"] }
  clip:
    uses: vendor-b/vendor-b-2.0-mini-v2v
    for_each: \${{ steps.badge.outputs }}
    with: { video_urls: [./assets/ride.mp4], prompt: restyle, reference_images: ["\${{ item.images[0].url }}"], duration: 5 }
  cover:
    uses: vendor-a/vendor-a-v3-t2i
    with: { prompt: "a cover for \${{ length(steps.bg.outputs) }} colours" }
`;

function planOf(text: string) {
  const plan = analyze(
    { path: 'recipes/chain.yaml', text, cwd: process.cwd() },
    { modelSchema: readBundledSchema, schemas: readRecipeLanguageSchemas(), probe: probeFile },
  );
  if (!plan.ok) throw new Error(formatDiagnostics(plan.error));
  return plan.value;
}

function priorities(text: string) {
  const plan = planOf(text);
  return Object.fromEntries(plan.steps.map((s) => [s.id, taskPriority(plan, s.id)]));
}

/** The launch-kit's shape: three heroes, an edit of the first, a video of the edit. */
const chosen = (settings = '') => `version: 1
name: chosen
${settings}steps:
  hero:
    uses: vendor-a/vendor-a-v3-t2i
    for_each: [a, b, c]
    with: { prompt: "\${{ item }}" }
  branded:
    uses: vendor-b/vendor-b-5.0-lite-edit
    with: { prompt: add a logo, image: ["\${{ steps.hero.outputs[0].images[0].url }}"] }
  clip:
    uses: vendor-b/vendor-b-2.0-mini-v2v
    with: { video_urls: [./assets/ride.mp4], prompt: restyle, reference_images: ["\${{ steps.branded.outputs.images[0].url }}"], duration: 5 }
`;

describe('the priority of a task for a slot', () => {
  it('carries a begun chain on before a new one starts: each flowing step goes just ahead of its upstream', () => {
    const p = priorities(recipe());
    expect(p.badge).toBeGreaterThan(p.bg!);
    expect(p.clip).toBeGreaterThan(p.badge!);
  });

  it('is highest level first where items do not flow: a step with more work behind it goes first', () => {
    const p = priorities(recipe('settings: { item_flow: false }\n'));
    expect(p.bg).toBeGreaterThan(p.badge!);
    expect(p.badge).toBeGreaterThan(p.clip!);
    // The cover waits for all of bg and has nothing behind it: last, with item flow or without.
    expect(p.cover).toBeLessThan(p.clip!);
    expect(priorities(recipe()).cover).toBeLessThan(priorities(recipe()).bg!);
  });

  it('puts a chosen item ahead, and the items nothing downstream chooses after the chain’s tasks', () => {
    const plan = planOf(chosen());
    const [hero0, hero1, hero2] = [0, 1, 2].map((index) => taskPriority(plan, 'hero', index));
    const [branded, clip] = [taskPriority(plan, 'branded'), taskPriority(plan, 'clip')];
    expect(hero0).toBeGreaterThan(branded);
    expect(branded).toBeGreaterThan(clip);
    expect(clip).toBeGreaterThan(hero1!);
    expect(hero2).toBe(hero1);
    // A barrier (item flow off) waits for every hero: they all have the chain behind them.
    const barrier = planOf(chosen('settings: { item_flow: false }\n'));
    expect(taskPriority(barrier, 'hero', 1)).toBe(taskPriority(barrier, 'hero', 0));
    expect(taskPriority(barrier, 'hero', 1)).toBeGreaterThan(taskPriority(barrier, 'branded'));
  });
});
