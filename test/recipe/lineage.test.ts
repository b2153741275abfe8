import { describe, expect, it } from 'vitest';
import { probeFile } from '../../src/files/probe.js';
import { readBundledSchema, readRecipeLanguageSchemas } from '../../src/model-schemas/bundled.js';
import { pricingOf } from '../../src/model-schemas/prices.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { estimatePlan, toMermaid } from '../../src/recipe/estimate.js';

const T2I = 'vendor-a/vendor-a-v3-t2i';
const EDIT = 'vendor-b/vendor-b-5.0-lite-edit';
const V2V = 'vendor-b/vendor-b-2.0-mini-v2v';

/** t2i over an input list → edit of each image → video of each edit, and a step that reads all images. */
const chain = (settings = '') => `version: 1
name: chain
${settings}inputs:
  colours: { type: array, default: [red, green, blue, amber] }
steps:
  bg:
    uses: ${T2I}
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} background" }
  badge:
    uses: ${EDIT}
    for_each: \${{ steps.bg.outputs[*].images[0].url }}
    with: { prompt: add a badge, image: ["\${{ item }}"] }
  clip:
    uses: ${V2V}
    for_each: \${{ steps.badge.outputs }}
    if: \${{ steps.bg.outcome == 'success' }}
    with: { video_urls: [./assets/ride.mp4], prompt: restyle, reference_images: ["\${{ item.url }}"], duration: 5, resolution: 720p }
  numbered:
    uses: ${EDIT}
    for_each: \${{ steps.bg.outputs }}
    with: { prompt: "number \${{ length(steps.bg.outputs) }}", image: ["\${{ item.url }}"] }
  sheet:
    run: echo \${{ join(steps.bg.outputs[*].url, ' ') }}
`;

function plan(text: string) {
  const result = analyze(
    { path: 'recipes/chain.yaml', text, cwd: process.cwd() },
    { modelSchema: readBundledSchema, schemas: readRecipeLanguageSchemas(), probe: probeFile },
  );
  if (!result.ok) throw new Error(formatDiagnostics(result.error));
  return result.value;
}

const pricing = pricingOf(readBundledSchema, {}, readBundledSchema);

describe('item lineage in the plan', () => {
  it('gives a step iterating another step’s items that step’s lineage, per item unless it reads it whole', () => {
    const steps = Object.fromEntries(plan(chain()).steps.map((s) => [s.id, s]));
    expect(steps.bg!.itemsFrom).toBeUndefined();
    expect(steps.badge!.itemsFrom).toEqual({
      step: 'bg',
      perItem: true,
      projection: [
        { kind: 'field', name: 'images' },
        { kind: 'index', index: 0 },
        { kind: 'field', name: 'url' },
      ],
    });
    // Its if reads bg's outcome: the outcome of bg[i], its item's own ancestor; still per item, and
    // bg is not waited for whole (the engine leaves it to the lineage).
    expect(steps.clip!.itemsFrom).toEqual({
      step: 'badge',
      perItem: true,
      projection: [],
      ancestorsReadPerItem: ['bg'],
      ifReadsLineageOutcome: true,
    });
    expect(steps.numbered!.itemsFrom).toEqual({
      step: 'bg',
      perItem: false,
      projection: [],
      wholeBecause: 'its with reads steps.bg.outputs as a whole',
    });
    expect(steps.sheet!.itemsFrom).toBeUndefined();
  });

  it('reads an ancestor per item only up to the first link that waits for a whole step', () => {
    const text = `version: 1
name: broken-link
steps:
  t2i: { uses: ${T2I}, for_each: [red, blue], with: { prompt: "\${{ item }}" } }
  edit:
    uses: ${EDIT}
    for_each: \${{ steps.t2i.outputs }}
    with: { prompt: "like \${{ steps.t2i.outputs[0].images[0].url }}", image: ["\${{ item.images[0].url }}"] }
  again:
    uses: ${EDIT}
    for_each: \${{ steps.edit.outputs }}
    if: \${{ steps.t2i.outcome == 'success' }}
    with: { prompt: again, image: ["\${{ item.images[0].url }}"] }
`;
    const steps = Object.fromEntries(plan(text).steps.map((s) => [s.id, s]));
    // edit reads t2i whole, so edit's items carry no t2i item: again waits for all of t2i.
    expect(steps.edit!.itemsFrom!.perItem).toBe(false);
    expect(steps.again!.itemsFrom).toEqual({ step: 'edit', perItem: true, projection: [] });
  });

  it('lets a step that reads chosen items of another wait for those items alone, and no step that reads more', () => {
    const extra = `  first:
    uses: ${EDIT}
    with: { prompt: "edit", image: ["\${{ steps.bg.outputs[0].url }}", "\${{ steps.bg.outputs[2].url }}"] }
  needed:
    uses: ${EDIT}
    needs: bg
    with: { prompt: "edit", image: ["\${{ steps.bg.outputs[0].url }}"] }
  outcome:
    uses: ${EDIT}
    if: \${{ steps.bg.outcome == 'success' }}
    with: { prompt: "edit", image: ["\${{ steps.bg.outputs[0].url }}"] }
  starred:
    uses: ${EDIT}
    with: { prompt: "\${{ join(steps.bg.outputs[*].url, ' ') }}", image: ["\${{ steps.bg.outputs[0].url }}"] }
`;
    const planned = plan(chain() + extra);
    const steps = Object.fromEntries(planned.steps.map((s) => [s.id, s]));
    expect(steps.first!.chosenItems).toEqual([{ step: 'bg', indices: [0, 2] }]);
    for (const id of ['needed', 'outcome', 'starred', 'numbered', 'badge', 'sheet'])
      expect(steps[id]!.chosenItems, id).toBeUndefined();
    const estimate = estimatePlan(planned, { rpm: 60, concurrency: 4, pricing });
    expect(estimate.steps.find((s) => s.id === 'first')!.chosen_items).toEqual([{ step: 'bg', indices: [0, 2] }]);
    // s1 is bg; first and needed follow the chain's five steps.
    expect(toMermaid(estimate)).toContain('  s1 -->|"bg[0], bg[2] → first"| s6');
    expect(toMermaid(estimate)).toContain('  s1 --> s7');
    // With item flow off, it waits for all of bg.
    const barrier = plan(chain('settings: { item_flow: false }\n') + extra);
    expect(barrier.steps.find((s) => s.id === 'first')!.chosenItems).toBeUndefined();
  });

  it('reads a chosen item past the count of a step only where both run: not where an if leaves either out', () => {
    const recipe = (make: boolean, late = 'inputs.make') => `version: 1
name: chosen
inputs:
  make: { type: boolean, default: ${make} }
steps:
  bg: { run: "echo \${{ item }}", for_each: [red, blue], if: "\${{ inputs.make }}" }
  pick: { run: "echo \${{ steps.bg.outputs[1].stdout }}" }
  late: { run: "echo \${{ steps.bg.outputs[3].stdout }}", if: "\${{ ${late} }}" }
`;
    // bg does not run: pick and late are skipped with it, and read nothing. It was a located error.
    const skipped = plan(recipe(false));
    expect(skipped.steps.find((s) => s.id === 'bg')!.runs).toEqual([0]);
    // Where bg runs, late reads an item bg does not have: still an error.
    expect(() => plan(recipe(true))).toThrow('steps.bg.outputs[3] reads item 3 of bg, which has 2 items');
    // And where late alone is left out by its if, its read is not judged.
    expect(plan(recipe(true, '!inputs.make')).steps).toHaveLength(3);
    // An empty list is not an if: bg runs, with no items, and pick would read a null.
    expect(() => plan(recipe(true).replace('for_each: [red, blue]', 'for_each: []'))).toThrow(
      'steps.bg.outputs[1] reads item 1 of bg, which has no items',
    );
  });

  it('lets the if of an item-by-item step read its item, and no other step’s if', () => {
    const withIf = (step: string) => chain().replace(`  ${step}:\n`, `  ${step}:\n    if: \${{ index != 2 }}\n`);
    expect(plan(withIf('badge')).steps.find((s) => s.id === 'badge')!.if).toBeDefined();
    expect(() => plan(withIf('bg'))).toThrow(/index is not available in this step's if: its condition is decided once/);
  });

  it('keeps the barrier with settings.item_flow: false, and says why', () => {
    const steps = Object.fromEntries(plan(chain('settings: { item_flow: false }\n')).steps.map((s) => [s.id, s]));
    expect(steps.badge!.itemsFrom).toMatchObject({
      step: 'bg',
      perItem: false,
      wholeBecause: 'settings.item_flow is false',
    });
  });

  it('counts every step of a chain whose first for_each is an input list, and prices it exactly', () => {
    const estimate = estimatePlan(plan(chain()), { rpm: 60, concurrency: 4, pricing });
    const byId = Object.fromEntries(estimate.steps.map((s) => [s.id, s]));
    expect(Object.fromEntries(estimate.steps.map((s) => [s.id, s.runs]))).toEqual({
      bg: 4,
      badge: 4,
      clip: 4,
      numbered: 4,
      sheet: 1,
    });
    expect(byId.badge!.items_from).toEqual({ step: 'bg', per_item: true });
    expect(byId.numbered!.items_from).toEqual({
      step: 'bg',
      per_item: false,
      because: 'its with reads steps.bg.outputs as a whole',
    });
    // clip's if reads bg's outcome, decided at run time: its runs may not happen, so the fewest
    // tasks and requests leave them out, and the cost counts them as at most.
    expect(estimate.totals.tasks).toEqual({ [T2I]: 4, [EDIT]: 8, [V2V]: 0 });
    expect(estimate.totals.requests).toMatchObject({ submissions: 12, polls: 12, dynamic_steps: [] });
    // 4 × $0.03 + 8 × $0.04 + 4 × 5 s × $0.06, the clips counted as if their if held for each item.
    expect(estimate.totals.cost).toEqual({
      usd: 1.64,
      lower_bound: false,
      dynamic_steps: [],
      unpriced_models: [],
      conditional_steps: ['clip'],
      conditional_usd: 1.2,
    });
    expect(byId.clip!.cost).toEqual({ usd: 1.2, per_run_usd: 0.3, dynamic: false, cached_runs: 0, conditional: true });
  });

  it('draws a per-item edge in Mermaid', () => {
    const mermaid = toMermaid(estimatePlan(plan(chain()), { pricing }));
    // Nodes s1… in the recipe's order: bg, badge, clip, numbered, sheet.
    expect(mermaid).toContain('  s1["bg<br/>vendor-a/vendor-a-v3-t2i ×4"]');
    expect(mermaid).toContain('  s1 -->|"bg[i] → badge[i]"| s2');
    expect(mermaid).toContain('  s2 -->|"badge[i] → clip[i]"| s3');
    // clip's if reads the outcome of its own bg item, further up its chain: per item too.
    expect(mermaid).toContain('  s1 -->|"bg[i] → clip[i]"| s3');
    const clip = estimatePlan(plan(chain()), { pricing }).steps.find((s) => s.id === 'clip')!;
    expect(clip.items_from).toEqual({ step: 'badge', per_item: true, ancestors_per_item: ['bg'] });
    expect(mermaid).toContain('  s1 --> s4');
    expect(mermaid).toContain('  s1 --> s5');
  });

  it('names Mermaid nodes by place, so that a step called end or with a - in its id still draws', () => {
    const recipe = 'version: 1\nname: words\nsteps:\n  my-step: { run: echo }\n  end: { run: echo, needs: my-step }\n';
    expect(toMermaid(estimatePlan(plan(recipe), { pricing })).split('\n')).toEqual([
      'flowchart TD',
      '  s1["my-step<br/>run"]',
      '  s2["end<br/>run"]',
      '  s1 --> s2',
    ]);
  });

  it('lets an item start when its upstream item is done: the least wall time is less than with the barrier', () => {
    const flowing = estimatePlan(plan(chain()), { rpm: 1000, concurrency: 4, pricing }).totals.least_wall_ms;
    const barrier = estimatePlan(plan(chain('settings: { item_flow: false }\n')), {
      rpm: 1000,
      concurrency: 4,
      pricing,
    }).totals.least_wall_ms;
    expect(flowing).toBeLessThanOrEqual(barrier);
  });

  it('takes the count of a list an LLM schema fixes (minItems = maxItems), from an input or a number', () => {
    const text = (length: string) => `version: 1
name: brief
inputs:
  count: { type: integer, default: 3 }
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      prompt: Write prompts
      schema: { type: object, properties: { prompts: { type: array, minItems: ${length}, maxItems: ${length}, items: { type: string } } } }
  hero:
    uses: ${T2I}
    for_each: \${{ steps.brief.outputs.json.prompts }}
    with: { prompt: "\${{ item }}" }
`;
    expect(plan(text('"${{ inputs.count }}"')).steps.find((s) => s.id === 'hero')!.runs).toEqual([3]);
    expect(plan(text('7')).steps.find((s) => s.id === 'hero')!.runs).toEqual([7]);
    const open = text('1').replace('maxItems: 1', 'maxItems: 4');
    expect(plan(open).steps.find((s) => s.id === 'hero')!.runs).toEqual(['dynamic']);
  });

  it('takes the count through a projection of the items, unless each item may give a list ([*] flattens it)', () => {
    const text = (promptSchema: string) => `version: 1
name: brief
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      prompt: Write shots
      schema: { type: object, properties: { shots: { type: array, minItems: 4, maxItems: 4, items: { type: object, properties: { prompt: ${promptSchema} } } } } }
  hero:
    uses: ${T2I}
    for_each: \${{ steps.brief.outputs.json.shots[*].prompt }}
    with: { prompt: "\${{ item }}" }
`;
    const runs = (schema: string) => plan(text(schema)).steps.find((s) => s.id === 'hero')!.runs;
    expect(runs('{ type: string }')).toEqual([4]);
    expect(runs('{ type: [string, "null"] }')).toEqual([4]);
    // A list per shot, or a prompt of any type, is flattened into the items: the count is not the schema's.
    expect(runs('{ type: array, items: { type: string } }')).toEqual(['dynamic']);
    expect(runs('{ description: anything }')).toEqual(['dynamic']);
  });

  it('counts slice() by whole numbers of a list whose length it knows: a step’s items, or a schema’s list', () => {
    const text = (forEach: string) => `version: 1
name: sliced
inputs:
  colours: { type: array, default: [red, green, blue, teal] }
steps:
  brief:
    uses: llm
    with:
      model: vendor-x/writer-1
      prompt: Write prompts
      schema: { type: object, properties: { prompts: { type: array, minItems: 5, maxItems: 5, items: { type: string } } } }
  bg:
    uses: ${T2I}
    for_each: \${{ inputs.colours }}
    with: { prompt: "a \${{ item }} background" }
  pick:
    uses: ${T2I}
    for_each: \${{ ${forEach} }}
    with: { prompt: "\${{ toJSON(item) }}" }
`;
    const runs = (forEach: string) => plan(text(forEach)).steps.find((s) => s.id === 'pick')!.runs;
    expect(runs('slice(steps.bg.outputs, 0, 2)')).toEqual([2]);
    expect(runs('slice(steps.bg.outputs, 1)')).toEqual([3]);
    expect(runs('slice(steps.bg.outputs, -1)')).toEqual([1]);
    expect(runs('slice(steps.bg.outputs, 2, 10)')).toEqual([2]);
    expect(runs('slice(steps.brief.outputs.json.prompts, 0, 3)')).toEqual([3]);
    // Bounds known only at run time: as before.
    expect(runs('slice(steps.bg.outputs, 0, length(steps.brief.outputs.json.prompts))')).toEqual(['dynamic']);
  });
});
