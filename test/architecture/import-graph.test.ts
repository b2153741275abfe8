import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as IConfiguration;

async function violations(baseDir: string, folders: string[]): Promise<string[]> {
  const result = await cruise(folders, {
    ...config.options,
    baseDir,
    ruleSet: { forbidden: config.forbidden ?? [] },
    validate: true,
  });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map((v) => {
    const cycle = v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' -> ')})` : '';
    return `${v.rule.name} ${v.from} -> ${v.to}${cycle}`;
  });
}

describe('the import graph', () => {
  it('flows one way: no module of src/ or test/ breaks a layering rule', async () => {
    const found = await violations(root, ['src', 'test']);
    expect(found, `import-graph violations:\n${found.join('\n')}`).toEqual([]);
  });

  it('reports a back-edge: the same rules fail on an analyzer that imports the engine', async () => {
    const found = await violations(join(import.meta.dirname, 'fixtures', 'back-edge'), ['src']);
    expect(found).toEqual(['recipe-above-execution src/recipe/analyzer.ts -> src/engine/engine.ts']);
  });

  it("keeps an action's parts in their layers: a plan part that imports the engine, an analyzer that loads runners", async () => {
    const found = await violations(join(import.meta.dirname, 'fixtures', 'action-layers'), ['src']);
    expect(found.sort()).toEqual([
      'action-plans-in-the-analyzer-layer src/actions/llm/plan.ts -> src/engine/items.ts',
      'analyzer-loads-no-action-runner src/recipe/analyzer.ts -> src/actions/runners.ts',
    ]);
  });

  it('lets a test into the command line through runCli alone: program.ts passes, a command module fails', async () => {
    const found = await violations(join(import.meta.dirname, 'fixtures', 'cli-entry'), ['src', 'test']);
    expect(found).toEqual(['tests-enter-the-cli-at-its-entry test/cli/commands.ts -> src/cli/run.ts']);
  });
});
