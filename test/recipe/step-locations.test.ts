import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { SourceFile } from '../../src/recipe/source.js';

const recipesDir = fileURLToPath(new URL('../../recipes/', import.meta.url));
const recipes = readdirSync(recipesDir).filter((name) => name.endsWith('.yaml'));

/** Where `locate`, from the full parse with locations, puts the key of each step. */
function locatedKeys(text: string): Record<string, number> {
  const file = new SourceFile('recipe.yaml', text, true);
  const steps = (load(text) as { steps: Record<string, unknown> }).steps;
  return Object.fromEntries(Object.keys(steps).map((id) => [id, file.locate(['steps', id], 'key').start]));
}

/** Where the quick scan puts them. */
function scannedKeys(text: string): Record<string, number | undefined> {
  const file = new SourceFile('recipe.yaml', text, true);
  const steps = (load(text) as { steps: Record<string, unknown> }).steps;
  return Object.fromEntries(Object.keys(steps).map((id) => [id, file.stepKeyOffset(id)]));
}

describe('the place of each step, found without a second parse', () => {
  it.each(recipes)('agrees with the full parse on every step of recipes/%s', (name) => {
    const text = readFileSync(join(recipesDir, name), 'utf8');
    expect(scannedKeys(text)).toEqual(locatedKeys(text));
  });

  it('reads quoted keys, comments, blank lines and block scalars, and stops at the next top-level key', () => {
    const text = [
      'version: 1',
      'name: shapes',
      'steps:',
      '  # the first',
      '  "first step":',
      '    run: |',
      '      notes: not a step',
      '',
      "  'second':",
      '    run: echo two',
      '  third:  # trailing comment',
      '    run: echo three',
      'outputs:',
      '  fourth: not a step',
      '',
    ].join('\n');
    const scanned = scannedKeys(text);
    expect(scanned).toEqual(locatedKeys(text));
    expect(new SourceFile('r.yaml', text, true).stepKeyOffset('fourth')).toBeUndefined();
    expect(new SourceFile('r.yaml', text, true).stepKeyOffset('notes')).toBeUndefined();
  });

  it('leaves a flow mapping of steps to the full parse', () => {
    const text = 'version: 1\nname: flow\nsteps: { a: { run: echo a } }\n';
    expect(new SourceFile('r.yaml', text, true).stepKeyOffset('a')).toBeUndefined();
  });
});
