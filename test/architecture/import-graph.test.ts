import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as IConfiguration;

/**
 * Violations the owners of those files are removing in the same change; each is listed so that
 * nothing else can slip in beside it. `rule from -> to`.
 */
const KNOWN: string[] = [
  // run.ts loads run-session.ts lazily, and run-session.ts takes keepRecipe/shown/RunFlags back from run.ts.
  'no-circular src/cli/run-session.ts -> src/cli/run.ts',
];

async function violations(baseDir: string, folders: string[]): Promise<string[]> {
  const result = await cruise(folders, { ...config.options, baseDir, ruleSet: { forbidden: config.forbidden ?? [] }, validate: true });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map((v) => {
    const cycle = v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' -> ')})` : '';
    return `${v.rule.name} ${v.from} -> ${v.to}${cycle}`;
  });
}

describe('the import graph', () => {
  it('flows one way: no module of src/ or test/ breaks a layering rule', async () => {
    const found = await violations(root, ['src', 'test']);
    const unexpected = found.filter((v) => !KNOWN.some((known) => v.startsWith(known)));
    expect(unexpected, `import-graph violations:\n${unexpected.join('\n')}`).toEqual([]);
  });

  it('reports a back-edge: the same rules fail on an analyzer that imports the engine', async () => {
    const found = await violations(join(import.meta.dirname, 'fixtures', 'back-edge'), ['src']);
    expect(found).toEqual(['recipe-above-execution src/recipe/analyzer.ts -> src/engine/engine.ts']);
  });
});
