import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluate,
  ExpressionError,
  ExpressionSyntaxError,
  LIMITS,
  parseExpression,
  parseTemplate,
  pathText,
  render,
  type Expr,
  type Scope,
} from '../../src/expressions/expressions.js';

/** Plain data only: what an expression may ever give back. */
function isPlainData(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return true;
  if (Array.isArray(value)) return value.every((v) => isPlainData(v, depth + 1));
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    return (
      (proto === Object.prototype || proto === null) &&
      Object.values(value as object).every((v) => isPlainData(v, depth + 1))
    );
  }
  return false;
}

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/);
const hostileName = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
);
const segment = fc.oneof(
  fc.oneof(name, hostileName).map((n) => `.${n}`),
  fc.nat({ max: 20 }).map((i) => `[${i}]`),
  fc.constant('[*]'),
  fc.oneof(fc.string({ maxLength: 8 }), hostileName).map((k) => `['${k.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`),
);
const path = fc
  .tuple(fc.constantFrom('inputs', 'steps', 'item', 'index', 'run', 'env'), fc.array(segment, { maxLength: 6 }))
  .map(([root, segments]) => root + segments.join(''));
const literal = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('true', 'false', 'null'),
  fc.string({ maxLength: 10 }).map((s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`),
);
const expression: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    path,
    literal,
    fc
      .constantFrom(['join', 1, 2], ['json', 1, 1], ['length', 1, 1], ['default', 2, 2], ['slice', 2, 3] as const)
      .chain(([fn, min, max]) =>
        fc
          .array(tie('expr'), { minLength: min as number, maxLength: max as number })
          .map((args) => `${fn as string}(${args.join(', ')})`),
      ),
  ),
})).expr;

/** Any JSON, with hostile keys mixed in: what step outputs and inputs may hold. */
const data = fc.jsonValue({ maxDepth: 4 }).chain((value) => fc.constant(value));
const scope: fc.Arbitrary<Scope> = fc.record({
  inputs: fc.dictionary(fc.oneof(name, hostileName), data, { maxKeys: 5 }),
  steps: fc.dictionary(name, fc.record({ outputs: data }), { maxKeys: 4 }),
  item: data,
  index: fc.nat(),
  run: fc.record({ id: fc.string(), dir: fc.string() }),
  env: fc.dictionary(name, fc.string(), { maxKeys: 3 }),
}) as fc.Arbitrary<Scope>;

describe('expressions, for any input', () => {
  it('the parser either parses or throws ExpressionSyntaxError, never anything else', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        try {
          parseExpression(text);
        } catch (error) {
          expect(error).toBeInstanceOf(ExpressionSyntaxError);
        }
        try {
          parseTemplate(text);
        } catch (error) {
          expect(error).toBeInstanceOf(ExpressionSyntaxError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('parses every well-formed expression, and a path prints back as written', () => {
    fc.assert(
      fc.property(expression, (text) => {
        const expr = parseExpression(text);
        if (expr.kind === 'path') {
          const printed = pathText(expr.root, expr.segments);
          expect(parseExpression(printed)).toEqual({ ...expr, end: printed.length });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('evaluation gives plain data or ExpressionError, and never reaches a prototype', () => {
    fc.assert(
      fc.property(expression, scope, (text, values) => {
        let expr: Expr;
        try {
          expr = parseExpression(text);
        } catch {
          return; // deep random nesting may pass the limits
        }
        try {
          const result = evaluate(expr, values);
          expect(isPlainData(result)).toBe(true);
          expect(typeof result).not.toBe('function');
        } catch (error) {
          expect(error).toBeInstanceOf(ExpressionError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('prototype names are plain missing keys', () => {
    const values: Scope = { inputs: { a: {} }, steps: {}, run: { id: 'r', dir: '/tmp' }, env: {} };
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      expect(evaluate(parseExpression(`inputs.a.${key}`), values)).toBeNull();
      expect(evaluate(parseExpression(`inputs.a['${key}']`), values)).toBeNull();
      expect(evaluate(parseExpression(`run.id.${key}`), values)).toBeNull();
      expect(evaluate(parseExpression(`inputs.a.${key}.${key}.polluted`), values)).toBeNull();
    }
    // Even JSON that holds an own "__proto__" key cannot be walked through it.
    const parsed = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    expect(evaluate(parseExpression('inputs.p.__proto__.x'), { ...values, inputs: { p: parsed } })).toBeNull();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('is bounded in size and depth', () => {
    expect(() => parseExpression('inputs.a'.padEnd(LIMITS.exprLength + 1, ' '))).toThrow(ExpressionSyntaxError);
    const deep = `${'json('.repeat(LIMITS.depth + 2)}1${')'.repeat(LIMITS.depth + 2)}`;
    expect(() => parseExpression(deep)).toThrow(/nested deeper than 32/);
    expect(() => parseTemplate('${{ 1 }}'.repeat(LIMITS.perString + 1))).toThrow(/more than 200 expressions/);
  });

  it('renders a whole expression with its type, and a longer string as text', () => {
    const values: Scope = {
      inputs: { list: ['a', 'b'], obj: { k: 1 }, n: 3 },
      steps: {},
      run: { id: 'r', dir: '/d' },
      env: {},
    };
    expect(render(parseTemplate('${{ inputs.list }}'), values)).toEqual(['a', 'b']);
    expect(render(parseTemplate('  ${{ inputs.n }} '), values)).toBe(3);
    expect(render(parseTemplate('n=${{ inputs.n }}; list=${{ inputs.list }}; obj=${{ inputs.obj }}'), values)).toBe(
      'n=3; list=a\nb; obj={"k":1}',
    );
  });

  it('maps [*] over a list and flattens one level', () => {
    const values: Scope = {
      inputs: {},
      steps: { hero: { outputs: [{ images: [{ url: 'a' }, { url: 'b' }] }, { images: [{ url: 'c' }] }] } },
      run: { id: 'r', dir: '/d' },
      env: {},
    };
    expect(evaluate(parseExpression('steps.hero.outputs[*].images[*].url'), values)).toEqual(['a', 'b', 'c']);
    expect(evaluate(parseExpression('steps.hero.outputs[*].images'), values)).toEqual([
      { url: 'a' },
      { url: 'b' },
      { url: 'c' },
    ]);
    expect(evaluate(parseExpression('steps.hero.outputs[*].images[0].url'), values)).toEqual(['a', 'c']);
    expect(evaluate(parseExpression("join(steps.hero.outputs[*].images[*].url, '+')"), values)).toBe('a+b+c');
    expect(evaluate(parseExpression('length(slice(steps.hero.outputs, 0, 1))'), values)).toBe(1);
    expect(evaluate(parseExpression("default(steps.hero.outputs[5], 'none')"), values)).toBe('none');
  });
});
