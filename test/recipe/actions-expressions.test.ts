import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashFilesUnder } from '../../src/engine/hash-files.js';
import { evaluate, ExpressionError, isTruthy, parseExpression, type Scope } from '../../src/expressions/expressions.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { bundledDeps } from './bundled-deps.js';

const scope: Scope = {
  inputs: { mode: 'Square', count: 3, tags: ['Red', 'blue'], empty: '', zero: 0, json: '{"a":{"b":[1,2]}}' },
  steps: { shot: { outputs: { url: 'https://x/y.png' }, outcome: 'failure', conclusion: 'success' } },
  run: { id: 'r', dir: '/tmp/r' },
  env: {},
};
const value = (text: string, extra: Partial<Scope> = {}) => evaluate(parseExpression(text), { ...scope, ...extra });

describe('operators, with GitHub Actions meaning and precedence', () => {
  it.each([
    ["inputs.mode == 'square'", true],
    ["inputs.mode != 'SQUARE'", false],
    ["'abc' < 'ABD'", true],
    ['inputs.count > 2', true],
    ['inputs.count >= 3 && inputs.count <= 3', true],
    ["inputs.count == '3'", true],
    ['null == 0', true],
    ["'' == false", true],
    ["'x' == 1", false],
    ["'x' != 1", true],
    ['inputs.tags == inputs.tags', true],
    ["inputs.tags == 'Red'", false],
    ['!inputs.empty', true],
    ['!inputs.tags', false],
    ['!!inputs.count', true],
    ["inputs.empty || 'fallback'", 'fallback'],
    ["inputs.count && 'yes'", 'yes'],
    ['inputs.zero && inputs.count', 0],
    // && binds tighter than ||, comparisons tighter than &&, ! tightest.
    ['true || false && false', true],
    ['(true || false) && false', false],
    ['!false == true', true],
    ['1 < 2 == true', true],
    ['fromJSON(inputs.json).a.b[1]', 2],
    ['(inputs.tags)[0]', 'Red'],
  ] as const)('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });

  it('! is the negation of Actions truthiness, for any value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(value('!inputs.v', { inputs: { v } })).toBe(!isTruthy(v));
      }),
    );
  });

  it('&& and || give one of their operands, chosen by truthiness, and agree with boolean logic', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const inputs = { a, b };
        expect(value('inputs.a && inputs.b', { inputs })).toEqual(isTruthy(a) ? b : a);
        expect(value('inputs.a || inputs.b', { inputs })).toEqual(isTruthy(a) ? a : b);
        expect(isTruthy(value('inputs.a && inputs.b', { inputs }))).toBe(isTruthy(a) && isTruthy(b));
        expect(isTruthy(value('inputs.a || inputs.b', { inputs }))).toBe(isTruthy(a) || isTruthy(b));
        expect(value('!(inputs.a && inputs.b) == (!inputs.a || !inputs.b)', { inputs })).toBe(true);
      }),
    );
  });

  it('truthiness is that of Actions: false, null, 0 and empty text are false; lists and objects are true', () => {
    for (const falsy of [false, null, 0, '']) expect(isTruthy(falsy)).toBe(false);
    for (const truthy of [true, 1, -1, 'false', '0', [], {}]) expect(isTruthy(truthy)).toBe(true);
  });

  it('text comparison ignores case, for any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        expect(value('inputs.a == inputs.b', { inputs: { a: text.toLowerCase(), b: text.toUpperCase() } })).toBe(
          text.toLowerCase().toUpperCase() === text.toUpperCase().toUpperCase(),
        );
      }),
    );
  });
});

describe('functions', () => {
  it.each([
    ["contains(inputs.tags, 'red')", true],
    ["contains(inputs.tags, 'green')", false],
    ["contains('Hello world', 'WORLD')", true],
    ["startsWith(steps.shot.outputs.url, 'HTTPS://')", true],
    ["endsWith(steps.shot.outputs.url, '.PNG')", true],
    ["format('{0} of {1}, {{literal}}', inputs.count, 'x')", '3 of x, {literal}'],
    ['toJSON(inputs.tags)', '[\n  "Red",\n  "blue"\n]'],
    ["fromJSON('[1, true]')", [1, true]],
    ['toJson(fromjson(\'{"a":1}\'))', '{\n  "a": 1\n}'],
    ["steps.shot.outcome == 'failure' && steps.shot.conclusion == 'success'", true],
  ] as const)('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });

  it('status functions read the state they are given, and fail outside an if', () => {
    const status = { failure: true, cancelled: false };
    expect([
      value('success()', { status }),
      value('failure()', { status }),
      value('always()', { status }),
      value('cancelled()', { status }),
    ]).toEqual([false, true, true, false]);
    expect(() => value('success()')).toThrow(new ExpressionError("success() can be used only in a step's if"));
  });

  it('fromJSON() of text that is no JSON, and format() without a value, are expression errors', () => {
    expect(() => value("fromJSON('{nope')")).toThrow(/^fromJSON\(\) could not read "\{nope" as JSON/);
    expect(() => value("format('{1}', 'a')")).toThrow('format() has no value for {1}: it got 1 after the pattern');
  });

  it('hashFiles() hashes the matching files under the recipe folder, in path order; no match is empty text', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hash-files-'));
    await writeFile(join(dir, 'a.txt'), 'one');
    await writeFile(join(dir, 'b.txt'), 'two');
    await writeFile(join(dir, 'c.md'), 'three');
    const all = hashFilesUnder(dir, ['*.txt']);
    expect(all).toMatch(/^[0-9a-f]{64}$/);
    expect(hashFilesUnder(dir, ['**/*.txt'])).toBe(all);
    expect(hashFilesUnder(dir, ['*.txt', '!b.txt'])).toBe(hashFilesUnder(dir, ['a.txt']));
    expect(hashFilesUnder(dir, ['a.txt'])).not.toBe(all);
    expect(hashFilesUnder(dir, ['*.png'])).toBe('');
    expect(value("hashFiles('*.md')", { hashFiles: (p) => hashFilesUnder(dir, p) })).toBe(
      hashFilesUnder(dir, ['c.md']),
    );
    await rm(dir, { recursive: true, force: true });
  });
});

/** The analyzer's first diagnostic for a recipe, exactly as printed. */
function diagnose(yaml: string): string {
  const result = analyze(
    { path: 'recipes/x.yaml', text: `version: 1\nname: x\n${yaml}`, cwd: process.cwd() },
    bundledDeps,
  );
  if (result.ok) throw new Error('the recipe was valid');
  return formatDiagnostics(result.error).split('\n')[0]!;
}

const INPUTS = 'inputs:\n  topic: { type: string, default: bikes }\n';

describe('diagnostics: did you mean, and what exists', () => {
  it.each([
    [
      'a step',
      `steps:\n  shot: { run: echo }\n  b: { run: "echo \${{ steps.shto.outputs.stdout }}" }\n`,
      "recipes/x.yaml:5:19: error: unknown step 'shto'; did you mean 'shot'? The other steps are shot",
    ],
    [
      'an input',
      `${INPUTS}steps:\n  b: { run: "echo \${{ inputs.topik }}" }\n`,
      "recipes/x.yaml:6:19: error: unknown input 'topik'; did you mean 'topic'? The inputs are topic",
    ],
    [
      'a field',
      `steps:\n  a: { run: echo }\n  b: { run: "echo \${{ steps.a.outputs.stdot }}" }\n`,
      "recipes/x.yaml:5:19: error: steps.a.outputs has no field 'stdot'; did you mean 'stdout'? It has stdout, stderr, exit_code, json",
    ],
    [
      'a step field',
      `steps:\n  a: { run: echo }\n  b: { run: "echo \${{ steps.a.outcom }}" }\n`,
      "recipes/x.yaml:5:19: error: steps.a has no field 'outcom'; did you mean 'outcome'? It has outputs, outcome, conclusion",
    ],
    [
      'a function',
      `steps:\n  a: { run: "echo \${{ contain(inputs, 'x') }}" }\n`,
      "recipes/x.yaml:4:19: error: invalid expression: unknown function 'contain'; did you mean 'contains'? The functions are join, json, length, default, slice, contains, startsWith, endsWith, format, toJSON, fromJSON, hashFiles, success, failure, always, cancelled",
    ],
    [
      'a root name',
      `steps:\n  a: { run: "echo \${{ input.topic }}" }\n`,
      "recipes/x.yaml:4:19: error: invalid expression: unknown name 'input'; did you mean 'inputs'? An expression starts with inputs, steps, item, index, run, env, a function or a literal",
    ],
    [
      'a step in needs',
      `steps:\n  shot: { run: echo }\n  b: { run: echo, needs: shto }\n`,
      "recipes/x.yaml:5:26: error: unknown step 'shto' in needs; did you mean 'shot'?",
    ],
    [
      'a missing operator',
      `steps:\n  a: { run: echo, if: "\${{ 1 = 1 }}" }\n`,
      "recipes/x.yaml:4:24: error: invalid expression: '=' is not an operator; did you mean '=='? The operators are ! < <= > >= == != && ||",
    ],
    [
      'arithmetic',
      `steps:\n  a: { run: "echo \${{ 1 + 1 }}" }\n`,
      'recipes/x.yaml:4:19: error: invalid expression: unexpected character "+"; there is no arithmetic; the operators are ! < <= > >= == != && ||',
    ],
    [
      'a status function outside if',
      `steps:\n  a: { run: "echo \${{ failure() }}" }\n`,
      "recipes/x.yaml:4:19: error: failure() can be used only in a step's if",
    ],
    [
      'ordering a list',
      `${INPUTS}steps:\n  a: { run: echo, if: "\${{ inputs.topic < steps.b.outputs.results }}" }\n  b: { uses: web-search, with: { query: q } }\n`,
      "recipes/x.yaml:6:24: error: '<' cannot order a list; compare its length() or one of its fields",
    ],
  ] as const)('%s', (_kind, yaml, expected) => {
    expect(diagnose(yaml)).toBe(expected);
  });
});

describe('a comparison with a value the other side never has', () => {
  const ENUMS =
    'inputs:\n  style: { type: string, enum: [noir, pastel], default: noir }\n  count: { type: integer, enum: [1, 2, 3], default: 1 }\n  logo: { type: file, enum: [./assets/logo.png], default: ./assets/logo.png }\n';
  const BRIEF =
    '  brief: { uses: llm, with: { model: vendor-x/writer-1, prompt: p, schema: { type: object, required: [tone], properties: { tone: { type: string, enum: [calm, bold] } } } } }\n';
  it.each([
    ["inputs.style == 'nior'", "inputs.style is one of noir, pastel, never 'nior'; did you mean 'noir'?"],
    ["'sepia' != inputs.style", "inputs.style is one of noir, pastel, never 'sepia'"],
    ['inputs.count == 4', 'inputs.count is one of 1, 2, 3, never 4'],
    [
      "steps.brief.outputs.json.tone == 'bolt'",
      "steps.brief.outputs.json.tone is one of calm, bold, never 'bolt'; did you mean 'bold'?",
    ],
    ["(inputs.style && inputs.style) == 'sepia'", "the value is one of noir, pastel, never 'sepia'"],
    // Another form of the word, too far for a slip of the keyboard, still gets its suggestion.
    [
      "steps.brief.outcome != 'succeeded'",
      "steps.brief.outcome is one of success, failure, cancelled, skipped, never 'succeeded'; did you mean 'success'?",
    ],
  ])('%s is refused', (condition, message) => {
    expect(diagnose(`${ENUMS}steps:\n${BRIEF}  a: { run: echo, if: "\${{ ${condition} }}" }\n`)).toMatch(
      new RegExp(`^recipes/x\\.yaml:\\d+:\\d+: error: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });

  it.each([
    // Text is compared without regard to case, and a number with its text, as the run compares.
    "inputs.style == 'NOIR' && steps.brief.outcome == 'Success'",
    "inputs.count == '2'",
    // What a function or || makes of an input may be another value.
    "default(inputs.style, 'sepia') == 'sepia'",
    "(inputs.style || 'sepia') == 'sepia'",
    "slice(inputs.style, 0, 2) == 'no'",
    // A file input reads as the absolute path it resolves to, not as its enum's text.
    `inputs.logo == '${join(process.cwd(), 'recipes/assets/logo.png')}'`,
  ])('%s is taken', (condition) => {
    const result = analyze(
      {
        path: 'recipes/x.yaml',
        text: `version: 1\nname: x\n${ENUMS}steps:\n${BRIEF}  a: { run: echo, if: "\${{ ${condition} }}" }\n`,
        cwd: process.cwd(),
      },
      bundledDeps,
    );
    expect(result.ok ? [] : formatDiagnostics(result.error).split('\n')[0]).toEqual([]);
  });
});

describe('an if that the implied success() keeps from ever holding', () => {
  const STEPS = 'steps:\n  a: { run: "exit 3" }\n  b: { run: "exit 3", continue_on_error: true }\n';
  const check = (condition: string) =>
    analyze(
      {
        path: 'recipes/x.yaml',
        text: `version: 1\nname: x\n${STEPS}  c: { run: echo, if: "${condition}" }\n`,
        cwd: process.cwd(),
      },
      bundledDeps,
    );
  it.each([
    [
      "steps.a.outcome == 'failure'",
      "steps.a.outcome == 'failure' never holds here: an if that calls no status function runs only when the steps before it succeeded; write failure() && steps.a.outcome == 'failure', or give a continue_on_error: true",
    ],
    [
      "${{ true && 'FAILURE' == steps.a.conclusion }}",
      "steps.a.conclusion == 'failure' never holds here: an if that calls no status function runs only when the steps before it succeeded; write failure() && steps.a.conclusion == 'failure'",
    ],
    [
      "${{ steps.b.conclusion == 'failure' }}",
      "steps.b.conclusion == 'failure' never holds here: an if that calls no status function runs only when the steps before it succeeded; b concludes success when it fails under continue_on_error: read steps.b.outcome",
    ],
  ])('%s is refused', (condition, message) => {
    const result = check(condition);
    expect(result.ok ? '' : formatDiagnostics(result.error).split('\n')[0]).toMatch(
      new RegExp(`^recipes/x\\.yaml:6:\\d+: error: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });

  it.each([
    "${{ failure() && steps.a.outcome == 'failure' }}",
    "${{ always() && steps.a.conclusion == 'failure' }}",
    // Under continue_on_error a failure concludes success: the implied success() holds.
    "${{ steps.b.outcome == 'failure' }}",
    // Not required: the other side may hold.
    "${{ steps.a.outcome == 'failure' || true }}",
    "${{ steps.a.outcome != 'failure' }}",
  ])('%s is taken', (condition) => {
    const result = check(condition);
    expect(result.ok ? [] : formatDiagnostics(result.error).split('\n')[0]).toEqual([]);
  });
});
