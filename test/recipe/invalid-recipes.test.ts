import { describe, expect, it } from 'vitest';
import { probeFile } from '../../src/cli/load-recipe.js';
import { readBundledSchema } from '../../src/model-schemas/bundled.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { INVALID_CASES } from './cases.js';

describe('invalid recipes give exactly the expected diagnostics', () => {
  it('has at least 40 cases', () => {
    expect(INVALID_CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = analyze(
      { path: 'recipes/broken.yaml', text: c.yaml, cwd: process.cwd(), ...(c.sets ? { sets: c.sets } : {}), ...(c.batch ? { batch: c.batch } : {}) },
      { modelSchema: readBundledSchema, probe: probeFile },
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(formatDiagnostics(result.error)).toBe(c.expected);
  });
});
