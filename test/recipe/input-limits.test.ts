import { describe, expect, it } from 'vitest';
import { analyze, type AnalyzerInput } from '../../src/recipe/analyzer.js';
import { formatDiagnostics, type Diagnostic } from '../../src/recipe/diagnostics.js';
import { RECIPE_LIMITS } from '../../src/recipe/input-limits.js';
import { bundledDeps } from './bundled-deps.js';

const HEAD = 'version: 1\nname: limits\n';
const nested = (depth: number, inner = '') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

function diagnose(text: string, more: Partial<AnalyzerInput> = {}): Diagnostic[] {
  const result = analyze({ path: 'limits.yaml', text, cwd: process.cwd(), ...more }, bundledDeps);
  return result.ok ? [] : result.error;
}

/** The first line of each diagnostic: `file:line:col: error: message`. */
const headlines = (diagnostics: Diagnostic[]) =>
  formatDiagnostics(diagnostics)
    .split('\n\n')
    .map((d) => d.split('\n')[0]);

/** Milliseconds a call takes. */
function timed<T>(work: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = work();
  return { value, ms: performance.now() - start };
}

describe('recipe input limits', () => {
  it('chose limits a real recipe never meets', () => {
    expect(RECIPE_LIMITS).toEqual({
      documentBytes: 24 * 1024 * 1024,
      depth: 64,
      steps: 200_000,
      items: 100_000,
      textChars: 1_000_000,
      batchRows: 1_000_000,
    });
  });

  it('refuses a list nested 3,000 deep at the list that passes 64, with no internal message', () => {
    const text = `${HEAD}steps:\n  a:\n    uses: web-search\n    with: { query: x, extra: ${nested(3000)} }\n`;
    const diagnostics = diagnose(text);
    expect(formatDiagnostics(diagnostics)).toBe(
      [
        'limits.yaml:6:90: error: this list or mapping is nested more than 64 deep; lists and mappings may nest at most 64 deep',
        '  |',
        // The excerpt of a long line is centred on the error.
        `6 | …${text.split('\n')[5]!.slice(29, 149)}…`,
        `  | ${' '.repeat(61)}~`,
      ].join('\n'),
    );
  });

  it('counts block lists and mappings alike, and lets exactly 64 pass', () => {
    // The recipe (1), inputs (2), t (3), then the default's lists: 61 of them make 64.
    const atDepth = (lists: number) =>
      `${HEAD}inputs:\n  t: { type: array, default: ${nested(lists, '1')} }\nsteps:\n  a: { run: echo }\n`;
    expect(diagnose(atDepth(61))).toEqual([]);
    expect(headlines(diagnose(atDepth(62)))).toEqual([
      'limits.yaml:4:91: error: this list or mapping is nested more than 64 deep; lists and mappings may nest at most 64 deep',
    ]);
    let block = `${HEAD}inputs:\n  t:\n    type: array\n    default:\n`;
    for (let depth = 0; depth < 1500; depth++) block += `${'  '.repeat(depth + 3)}-\n`;
    expect(headlines(diagnose(block))).toEqual([
      'limits.yaml:68:129: error: this list or mapping is nested more than 64 deep; lists and mappings may nest at most 64 deep',
    ]);
  });

  it('measures depth after aliases, which nest a value deeper than its text', () => {
    const text = `${HEAD}inputs:\n  t: { type: array, default: &deep ${nested(40, '1')} }\n  u: { type: array, default: ${nested(40, '*deep')} }\nsteps:\n  a: { run: echo }\n`;
    expect(headlines(diagnose(text))).toEqual([
      'limits.yaml:5:70: error: this list or mapping is nested more than 64 deep; lists and mappings may nest at most 64 deep',
    ]);
  });

  it('lets a file expand 100 aliases, and refuses the 101st at it', () => {
    const recipe = (count: number) =>
      `${HEAD}description: &d hello\nsteps:\n  a:\n    run: [echo, ${Array.from({ length: count }, () => '*d').join(', ')}]\n`;
    expect(diagnose(recipe(100))).toEqual([]);
    const column = `    run: [echo, ${'*d, '.repeat(100)}`.length + 1;
    expect(headlines(diagnose(recipe(101)))).toEqual([
      `limits.yaml:6:${column}: error: the file expands more than 100 aliases (an alias of a node that holds aliases counts each of them)`,
    ]);
  });

  it('refuses a recipe over 24 MB before reading it', () => {
    const text = `${HEAD}# ${'x'.repeat(RECIPE_LIMITS.documentBytes)}\nsteps:\n  a: { run: echo }\n`;
    const { value, ms } = timed(() => diagnose(text));
    expect(headlines(value)).toEqual(['limits.yaml:1:1: error: the recipe is 24 MB; a recipe may be at most 24 MB']);
    expect(ms).toBeLessThan(5_000);
  });

  it('refuses more than 200,000 steps at the steps key', () => {
    const steps = Array.from({ length: RECIPE_LIMITS.steps + 1 }, (_, i) => `  s${i}: { run: echo }`).join('\n');
    expect(headlines(diagnose(`${HEAD}steps:\n${steps}\n`))).toEqual([
      'limits.yaml:3:1: error: the recipe has 200,001 steps; a recipe may have at most 200,000',
    ]);
  });

  it('refuses a literal for_each of more than 100,000 items at the list', () => {
    const items = Array.from({ length: RECIPE_LIMITS.items + 1 }, (_, i) => i).join(', ');
    const text = `${HEAD}steps:\n  a:\n    for_each: [${items}]\n    run: echo \${{ item }}\n`;
    expect(headlines(diagnose(text))).toEqual([
      'limits.yaml:5:15: error: steps.a.for_each has 100,001 entries; a list or mapping may have at most 100,000',
    ]);
  });

  it('refuses a text or a key over 1,000,000 characters at it', () => {
    const long = 'x'.repeat(RECIPE_LIMITS.textChars + 1);
    expect(headlines(diagnose(`${HEAD}steps:\n  a:\n    uses: web-search\n    with: { query: ${long} }\n`))).toEqual([
      'limits.yaml:6:20: error: steps.a.with.query is 1,000,001 characters long; a text may be at most 1,000,000',
    ]);
    expect(headlines(diagnose(`${HEAD}steps:\n  a:\n    uses: web-search\n    with: { ${long}: 1 }\n`))).toEqual([
      'limits.yaml:6:13: error: a key of 1,000,001 characters in steps.a.with; a key may be at most 1,000,000',
    ]);
  });

  describe('in values given outside the recipe', () => {
    const recipe = `${HEAD}inputs:\n  t: { type: array }\nsteps:\n  a:\n    for_each: \${{ inputs.t }}\n    run: echo \${{ item }}\n`;
    const deepJson = nested(100_000);

    it('refuses a batch row whose JSON nests 100,000 deep, at the row', () => {
      const jsonl = diagnose(recipe, { batch: { path: 'rows.jsonl', text: `{"t": [1]}\n{"t": ${deepJson}}\n` } });
      expect(headlines(jsonl)).toEqual([
        "rows.jsonl:2:1: error: input 't' nests lists and mappings more than 64 deep; a value may nest at most 64 deep",
      ]);
      const csv = diagnose(recipe, { batch: { path: 'rows.csv', text: `t\n"${deepJson}"\n` } });
      expect(headlines(csv)).toEqual([
        "rows.csv:2:1: error: input 't' nests lists and mappings more than 64 deep; a value may nest at most 64 deep",
      ]);
      const skipping = diagnose(recipe, {
        batch: { path: 'rows.jsonl', text: `{"t": ${deepJson}}\n{"t": [2]}\n` },
        skipInvalidRows: true,
      });
      expect(skipping).toEqual([]);
    });

    it('refuses a --set value past a limit, and a long text inside a row', () => {
      expect(headlines(diagnose(recipe, { sets: [`t=${nested(80)}`] }))).toEqual([
        "command line:1:9: error: input 't' nests lists and mappings more than 64 deep; a value may nest at most 64 deep",
      ]);
      const row = JSON.stringify({ t: ['a', { b: 'x'.repeat(RECIPE_LIMITS.textChars + 1) }] });
      expect(headlines(diagnose(recipe, { batch: { path: 'rows.jsonl', text: `${row}\n` } }))).toEqual([
        "rows.jsonl:1:1: error: input 't' holds a text of 1,000,001 characters at [1].b; a text may be at most 1,000,000",
      ]);
    });

    it('refuses a batch file of more than 1,000,000 rows at the first row past it', () => {
      const rows = `${'{"t": [1]}\n'.repeat(RECIPE_LIMITS.batchRows + 5)}`;
      expect(headlines(diagnose(recipe, { batch: { path: 'rows.jsonl', text: rows } }))).toEqual([
        'rows.jsonl:1000001:1: error: the batch file has more than 1,000,000 rows; a batch file may have at most 1,000,000',
      ]);
    });
  });
});

describe('analysis stays linear on hostile recipes', () => {
  // Each took minutes before suggestions and the cycle search were bounded; each is well under a
  // second now. The bounds are loose so that a busy machine cannot fail them.
  it('answers 3,000,000 characters of unknown needs across 200 steps (many names) in seconds', () => {
    const lines = [HEAD, 'steps:'];
    for (let i = 0; i < 200; i++) {
      const names = Array.from({ length: 680 }, (_, j) => `missing_step_${i}_${j}`);
      lines.push(`  s${i}:`, '    uses: web-search', `    needs: [${names.join(', ')}]`, `    with: { query: x${i} }`);
    }
    const { value, ms } = timed(() => diagnose(lines.join('\n')));
    expect(value).toHaveLength(200 * 680);
    expect(value[0]!.message).toBe("unknown step 'missing_step_0_0' in needs");
    expect(ms).toBeLessThan(20_000);
  });

  it('answers 200 needs of 15,000 characters each in seconds', () => {
    const lines = [HEAD, 'steps:'];
    for (let i = 0; i < 200; i++)
      lines.push(`  s${i}:`, '    uses: web-search', `    needs: ${'n'.repeat(14_990)}${i}`, `    with: { query: x }`);
    const { value, ms } = timed(() => diagnose(lines.join('\n')));
    expect(value).toHaveLength(200);
    expect(ms).toBeLessThan(10_000);
  });

  it('suggests for a slip, and lists the other steps only up to 20 in each message', () => {
    const steps = Array.from(
      { length: 5_000 },
      (_, i) => `  step_${i}: { run: 'echo \${{ steps.stepp_${(i + 1) % 5_000}.outputs.text }}' }`,
    );
    const { value, ms } = timed(() => diagnose(`${HEAD}steps:\n${steps.join('\n')}\n`));
    expect(value).toHaveLength(5_000);
    expect(value[0]!.message).toBe(
      "unknown step 'stepp_1'; did you mean 'step_1'? The other steps are step_1, step_2, step_3, step_4, step_5, step_6, step_7, step_8, step_9, step_10, step_11, step_12, step_13, step_14, step_15, step_16, step_17, step_18, step_19, step_20 and 4979 more",
    );
    expect(ms).toBeLessThan(20_000);
  });

  it('finds the cycle at the end of a chain of 20,000 steps once', () => {
    const steps = Array.from(
      { length: 20_000 },
      (_, i) => `  s${i}: { run: echo, needs: ${i === 19_999 ? 's19998' : `s${i + 1}`} }`,
    );
    const { value, ms } = timed(() => diagnose(`${HEAD}steps:\n${steps.join('\n')}\n`));
    expect(value.map((d) => d.message)).toEqual([
      'the steps form a cycle: s19998 → s19999 (steps.s19998.needs names s19999), s19999 → s19998 (steps.s19999.needs names s19998)',
    ]);
    expect(ms).toBeLessThan(20_000);
  });
});
