import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { bundledDeps } from './bundled-deps.js';
import { INVALID_CASES } from './cases.js';

describe('invalid recipes give exactly the expected diagnostics', () => {
  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = analyze(
      {
        path: 'recipes/broken.yaml',
        text: c.yaml,
        cwd: process.cwd(),
        ...(c.sets ? { sets: c.sets } : {}),
        ...(c.batch ? { batch: c.batch } : {}),
      },
      bundledDeps,
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(formatDiagnostics(result.error)).toBe(c.expected);
  });
});
