import { describe, expect, it } from 'vitest';
import { SpendMeter } from '../../src/engine/spend.js';
import { mayRetryStep } from '../../src/engine/step-retry.js';
import { readBundledSchema } from '../../src/model-schemas/bundled.js';
import { formatUsd, parsePriceRule, parsePriceTable, pricingOf } from '../../src/model-schemas/prices.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { estimatePlan } from '../../src/recipe/estimate.js';
import { describeTotalCost } from '../../src/session/prices.js';
import { bundledDeps } from './bundled-deps.js';

const T2I = 'vendor-a/vendor-a-v3-t2i';
const EDIT = 'vendor-b/vendor-b-5.0-lite-edit';
const V2V = 'vendor-b/vendor-b-2.0-mini-v2v';
const bundled = pricingOf(readBundledSchema);

describe('the bundled price rules', () => {
  it('price an image, a 2K image counting two, and n images', () => {
    expect(bundled.cost(T2I, { prompt: 'x' })).toBe(0.03);
    expect(bundled.cost(T2I, { prompt: 'x', resolution: '2k' })).toBe(0.06);
    expect(bundled.cost(T2I, { prompt: 'x', resolution: '2k', n: 4 })).toBe(0.24);
  });

  it('price an edit per output image, the batch maximum in auto mode', () => {
    expect(bundled.cost(EDIT, { prompt: 'x', image: ['a'] })).toBe(0.04);
    expect(bundled.cost(EDIT, { prompt: 'x', image: ['a'], sequential_image_generation: 'auto' })).toBe(0.6);
    const capped = {
      prompt: 'x',
      image: ['a'],
      sequential_image_generation: 'auto',
      sequential_image_generation_max_images: 3,
    };
    expect(bundled.cost(EDIT, capped)).toBe(0.12);
  });

  it('price video per second, 480p counting 0.6, with the schema default of 5 seconds', () => {
    expect(bundled.cost(V2V, { video_urls: ['v'] })).toBe(0.3);
    expect(bundled.cost(V2V, { video_urls: ['v'], duration: 10, resolution: '480p' })).toBe(0.36);
  });

  it('know no price for a model without a rule: unknown, not zero', () => {
    expect(bundled.cost('vendor-z/none', { prompt: 'x' })).toBeUndefined();
  });
});

describe('price files', () => {
  it('take a number as the price per unit of the bundled rule, or per task for another model', () => {
    const table = parsePriceTable({ [T2I]: 0.05, 'vendor-z/none': 0.5 }, 'prices.yaml', bundled.rule);
    expect(table.ok).toBe(true);
    const pricing = pricingOf(readBundledSchema, table.ok ? table.value : {});
    expect(pricing.cost(T2I, { prompt: 'x', resolution: '2k' })).toBe(0.1);
    expect(pricing.cost('vendor-z/none', { n: 9 })).toBe(0.5);
  });

  it('refuse what is not a price, naming where', () => {
    expect(parsePriceTable([1], 'p.json', bundled.rule)).toMatchObject({
      ok: false,
      error: expect.stringContaining('p.json must be a map'),
    });
    expect(parsePriceTable({ 'no-slash': 1 }, 'p.json', bundled.rule)).toMatchObject({
      ok: false,
      error: "p.json: 'no-slash' is not a model slug (provider/model_id)",
    });
    expect(parsePriceRule({ usd: 'cheap' }, 'x')).toMatchObject({
      ok: false,
      error: 'x.usd must be a number of at least 0',
    });
    expect(parsePriceRule({ usd: 1, factors: { resolution: { '2k': -2 } } }, 'x')).toMatchObject({ ok: false });
    expect(parsePriceRule(Number.NaN, 'x')).toMatchObject({ ok: false });
  });
});

describe('the spend meter', () => {
  it('commits each submission before it is sent and refuses one that would pass the cap', () => {
    const meter = new SpendMeter(bundled, { capUsd: 0.1 });
    for (let i = 0; i < 3; i++) expect(meter.reserve(T2I, { prompt: 'x' }, `image[${i}]`).ok).toBe(true);
    const over = meter.reserve(T2I, { prompt: 'x' }, 'image[3]');
    expect(over.ok).toBe(false);
    if (!over.ok) {
      expect(over.error.reason).toBe('spend-cap');
      expect(over.error.message).toBe(
        'image[3] was not sent: it costs $0.0300 and the run has committed $0.0900 of its cap of $0.1000. ' +
          'To go on, resume the run with a higher --max-cost (the command is printed when the run ends)',
      );
    }
    // A submission the gateway certainly refused was not paid: its room comes back.
    meter.release(0.03);
    expect(meter.reserve(T2I, { prompt: 'x' }, 'image[3]').ok).toBe(true);
    expect(meter.committedUsd).toBe(0.09);
  });

  it('counts what an earlier session committed, and sends nothing after a 402', () => {
    const meter = new SpendMeter(bundled, { capUsd: 0.1, committedUsd: 0.08 });
    expect(meter.reserve(T2I, { prompt: 'x' }, 'a').ok).toBe(false);
    const open = new SpendMeter(bundled, {});
    open.stopForBalance('Insufficient balance: this task costs $0.0300 and the team balance is $0.0100');
    const after = open.reserve(T2I, { prompt: 'x' }, 'b');
    expect(after).toMatchObject({ ok: false, error: { reason: 'insufficient-balance' } });
    if (!after.ok) expect(after.error.message).toContain("Recharge the team's balance, then resume the run");
  });

  it('is a failure the retry policy never retries', () => {
    expect(mayRetryStep({ reason: 'spend-cap', outcomeUnknown: false })).toBe(false);
    expect(mayRetryStep({ reason: 'insufficient-balance', outcomeUnknown: false })).toBe(false);
  });
});

/** The plan of a recipe given as its lines; it must be valid. */
function planOf(lines: string[]) {
  const plan = analyze({ path: 'recipe.yaml', text: [...lines, ''].join('\n'), cwd: process.cwd() }, bundledDeps);
  if (!plan.ok) throw new Error('the recipe should be valid');
  return plan.value;
}

describe('the estimate of a for_each known before the run', () => {
  it('prices each item as itself: a 1K and a 2K image from for_each: [1k, 2k], not two 1K', () => {
    const plan = planOf([
      'version: 1',
      'name: sizes',
      'inputs:',
      '  sizes: { type: array, default: [1k, 2k, 2k] }',
      'steps:',
      '  literal:',
      `    uses: ${T2I}`,
      '    for_each: [1k, 2k]',
      '    with: { prompt: a lighthouse, resolution: "${{ item }}" }',
      '  from_input:',
      `    uses: ${T2I}`,
      '    for_each: ${{ inputs.sizes }}',
      '    with: { prompt: "lighthouse ${{ index }}", resolution: "${{ item }}" }',
    ]);
    const estimate = estimatePlan(plan, { pricing: bundled });
    expect(estimate.steps.map((step) => step.cost?.usd)).toEqual([0.09, 0.15]);
    expect(estimate.totals.cost).toMatchObject({ usd: 0.24, lower_bound: false });
  });
});

describe('the estimate of a step with an if', () => {
  it('counts its runs as if it held for each, and says the total is at most that, by how much', () => {
    const plan = planOf([
      'version: 1',
      'name: fallback',
      'steps:',
      `  t2i: { uses: ${T2I}, for_each: [red, green, blue], continue_on_error: true, with: { prompt: "\${{ item }}" } }`,
      '  fallback:',
      `    uses: ${EDIT}`,
      '    for_each: ${{ steps.t2i.outputs }}',
      "    if: ${{ steps.t2i.outcome == 'failure' }}",
      '    with: { prompt: plain, image: [./recipes/assets/logo.png] }',
    ]);
    const { cost } = estimatePlan(plan, { pricing: bundled }).totals;
    expect(cost).toMatchObject({
      usd: 0.21,
      lower_bound: false,
      conditional_steps: ['fallback'],
      conditional_usd: 0.12,
    });
    expect(describeTotalCost(cost)).toBe(
      'at most $0.2100, an upper bound: fallback runs only where its if holds, counted here as if it always did, up to $0.1200',
    );
    // The fewest tasks and requests leave out runs that may not happen.
    const { tasks, requests } = estimatePlan(plan, { pricing: bundled }).totals;
    expect(tasks).toMatchObject({ [T2I]: 3, [EDIT]: 0 });
    expect(requests).toMatchObject({ submissions: 3, polls: 3 });
  });

  it('prices exactly a step whose if reads inputs alone: it is decided before the run', () => {
    const plan = planOf([
      'version: 1',
      'name: optional',
      'inputs: { video: { type: boolean, default: true } }',
      'steps:',
      `  t2i: { uses: ${T2I}, if: "\${{ inputs.video }}", with: { prompt: kite } }`,
    ]);
    const { cost, tasks } = estimatePlan(plan, { pricing: bundled }).totals;
    expect(cost).toEqual({ usd: 0.03, lower_bound: false, dynamic_steps: [], unpriced_models: [] });
    expect(tasks).toEqual({ [T2I]: 1 });
  });
});

describe('the estimate of a price field known only at run time', () => {
  it('prices it at the dearest value its schema allows and says the total is at most; a field the price does not read is not named', () => {
    const plan = planOf([
      'version: 1',
      'name: late',
      'steps:',
      '  pick: { uses: llm, with: { model: vendor-x/writer-1, prompt: "Say 1k or 2k" } }',
      '  img:',
      `    uses: ${T2I}`,
      '    with: { prompt: "${{ steps.pick.outputs.text }}", resolution: "${{ steps.pick.outputs.text }}" }',
    ]);
    const { cost } = estimatePlan(plan, { pricing: bundled }).totals;
    expect(cost).toMatchObject({ usd: 0.06, lower_bound: false, priced_at_most: ['img.resolution'] });
    expect(cost.priced_at_defaults).toBeUndefined();
    expect(describeTotalCost(cost)).toBe(
      'at most $0.0600, an upper bound: img.resolution is known only at run time, priced at the dearest value the model allows',
    );
  });

  it('prices a list with an element known only at run time as the step, not item by item', () => {
    const plan = planOf([
      'version: 1',
      'name: late-item',
      'steps:',
      '  pick: { uses: llm, with: { model: vendor-x/writer-1, prompt: "Say 1k or 2k" } }',
      '  img:',
      `    uses: ${T2I}`,
      '    for_each: ["${{ steps.pick.outputs.text }}", 2k]',
      '    with: { prompt: a kite, resolution: "${{ item }}" }',
    ]);
    const { cost } = estimatePlan(plan, { pricing: bundled }).totals;
    expect(cost).toMatchObject({ usd: 0.12, priced_at_most: ['img.resolution'] });
  });

  it("prices a field its schema does not bound at the model's default, and says so", () => {
    const schema = {
      type: 'object',
      properties: {
        frames: { type: 'integer', default: 24 },
        quality: { type: 'string', enum: ['draft', 'final'], default: 'draft' },
      },
      'x-price': { usd: 0.001, unit: 'frame', multiply: ['frames'], factors: { quality: { final: 3 } } },
    };
    const pricing = pricingOf(() => schema);
    // frames has no maximum: its default; quality at its dearest, final.
    expect(pricing.dearest('acme/anim', {}, ['frames', 'quality'])).toEqual({ usd: 0.072, unbounded: ['frames'] });
    // A field the price does not read changes nothing.
    expect(pricing.dearest('acme/anim', { frames: 10 }, ['seed'])).toEqual({ usd: 0.01, unbounded: [] });
  });
});

describe('the estimate and a step cache', () => {
  it('counts runs a cache answers as costing nothing', () => {
    const plan = planOf([
      'version: 1',
      'name: cached',
      'steps:',
      '  image:',
      `    uses: ${T2I}`,
      '    for_each: [a, b, c, d]',
      '    with: { prompt: "${{ item }}" }',
    ]);
    expect(estimatePlan(plan, { pricing: bundled }).totals.cost.usd).toBe(0.12);
    const cached = estimatePlan(plan, { pricing: bundled, cached: new Map([['image', 3]]) });
    expect(cached.steps[0]!.cost).toEqual({ usd: 0.03, per_run_usd: 0.03, dynamic: false, cached_runs: 3 });
    expect(cached.totals.cost.usd).toBe(0.03);
  });

  it("never counts below no request when a dynamic step's runs are cached", () => {
    const plan = planOf([
      'version: 1',
      'name: dynamic',
      'steps:',
      '  brief: { uses: llm, with: { model: vendor-x/writer-1, prompt: "Write 3 prompts" } }',
      '  image:',
      `    uses: ${T2I}`,
      '    for_each: ${{ steps.brief.outputs.json.prompts }}',
      '    with: { prompt: "${{ item }}" }',
    ]);
    const cached = new Map([
      ['brief', 1],
      ['image', 3],
    ]);
    const { requests } = estimatePlan(plan, { pricing: bundled, cached }).totals;
    expect(requests).toMatchObject({ submissions: 0, polls: 0, text_calls: 0, total: 0, dynamic_steps: ['image'] });
  });
});

describe('formatUsd', () => {
  it('gives four decimals, and the first significant digits of an amount that would show as $0.0000', () => {
    expect([0, 0.03, 12.5, 0.00005].map(formatUsd)).toEqual(['$0.0000', '$0.0300', '$12.5000', '$0.0001']);
    // A cap of --max-cost 0.00001 is not "$0.0000": a message comparing an estimate to it would read as nonsense.
    expect([0.00001, 0.0000123, -0.00002].map(formatUsd)).toEqual(['$0.00001', '$0.000012', '-$0.00002']);
    expect(formatUsd(1e-15)).toBe('$0.0000');
  });
});
