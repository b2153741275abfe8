/**
 * `${{ … }}` expressions: paths (`steps.hero.outputs[0].images[*].url`), literals, and five pure
 * functions. Nothing can run code, read files or reach the network; the parser is bounded in
 * size and depth, and property access sees only a value's own data.
 */

export type Segment = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' };

export type Expr =
  | { kind: 'path'; root: string; segments: Segment[]; start: number; end: number }
  | { kind: 'call'; name: FunctionName; args: Expr[]; start: number; end: number }
  | { kind: 'literal'; value: string | number | boolean | null; start: number; end: number };

export const ROOTS = ['inputs', 'steps', 'item', 'index', 'run', 'env'] as const;
export const FUNCTIONS = { join: [1, 2], json: [1, 1], length: [1, 1], default: [2, 2], slice: [2, 3] } as const;
export type FunctionName = keyof typeof FUNCTIONS;

/** Longest expression text, deepest nesting, most expressions in one string. */
export const LIMITS = { exprLength: 2000, depth: 32, perString: 200 } as const;

export class ExpressionSyntaxError extends Error {
  constructor(
    message: string,
    /** Offset within the expression text. */
    readonly offset: number,
  ) {
    super(message);
  }
}

type Token = { kind: 'ident' | 'number' | 'string' | 'punct'; text: string; value?: string | number; start: number; end: number };

const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    if (/\s/.test(char)) {
      at++;
      continue;
    }
    if ('.[](),*'.includes(char)) {
      tokens.push({ kind: 'punct', text: char, start: at, end: at + 1 });
      at++;
      continue;
    }
    if (char === "'" || char === '"') {
      let value = '';
      let end = at + 1;
      for (;;) {
        if (end >= text.length) throw new ExpressionSyntaxError('unterminated string', at);
        const c = text[end]!;
        if (c === '\\' && end + 1 < text.length) {
          value += text[end + 1];
          end += 2;
        } else if (c === char) {
          // A doubled quote stands for itself, as in YAML's single-quoted strings.
          if (text[end + 1] === char) {
            value += char;
            end += 2;
          } else break;
        } else {
          value += c;
          end++;
        }
      }
      tokens.push({ kind: 'string', text: text.slice(at, end + 1), value, start: at, end: end + 1 });
      at = end + 1;
      continue;
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (number && (char === '-' || /\d/.test(char))) {
      tokens.push({ kind: 'number', text: number[0], value: Number(number[0]), start: at, end: at + number[0].length });
      at += number[0].length;
      continue;
    }
    IDENT.lastIndex = at;
    const ident = IDENT.exec(text);
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], start: at, end: at + ident[0].length });
      at += ident[0].length;
      continue;
    }
    throw new ExpressionSyntaxError(`unexpected character ${JSON.stringify(char)}`, at);
  }
  return tokens;
}

/** Parses the text between `${{` and `}}`. */
export function parseExpression(text: string): Expr {
  if (text.length > LIMITS.exprLength) throw new ExpressionSyntaxError(`expression longer than ${LIMITS.exprLength} characters`, 0);
  const tokens = tokenize(text);
  let position = 0;
  const peek = () => tokens[position];
  const next = () => tokens[position++];
  const expect = (punct: string) => {
    const token = next();
    if (token?.kind !== 'punct' || token.text !== punct) throw new ExpressionSyntaxError(`expected '${punct}'${token ? ` but found '${token.text}'` : ' at the end'}`, token?.start ?? text.length);
    return token;
  };

  function expression(depth: number): Expr {
    if (depth > LIMITS.depth) throw new ExpressionSyntaxError(`expression nested deeper than ${LIMITS.depth}`, peek()?.start ?? 0);
    const token = next();
    if (!token) throw new ExpressionSyntaxError('empty expression', text.length);
    if (token.kind === 'string' || token.kind === 'number') return { kind: 'literal', value: token.value!, start: token.start, end: token.end };
    if (token.kind !== 'ident') throw new ExpressionSyntaxError(`unexpected '${token.text}'`, token.start);
    if (token.text === 'true' || token.text === 'false' || token.text === 'null') {
      return { kind: 'literal', value: token.text === 'null' ? null : token.text === 'true', start: token.start, end: token.end };
    }
    if (peek()?.text === '(') {
      if (!(token.text in FUNCTIONS)) throw new ExpressionSyntaxError(`unknown function '${token.text}'; the functions are ${Object.keys(FUNCTIONS).join(', ')}`, token.start);
      const name = token.text as FunctionName;
      next();
      const args: Expr[] = [];
      if (peek()?.text !== ')') {
        for (;;) {
          args.push(expression(depth + 1));
          if (peek()?.text === ',') next();
          else break;
        }
      }
      const close = expect(')');
      const [min, max] = FUNCTIONS[name];
      if (args.length < min || args.length > max) {
        throw new ExpressionSyntaxError(`${name}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}`, token.start);
      }
      return { kind: 'call', name, args, start: token.start, end: close.end };
    }
    if (!(ROOTS as readonly string[]).includes(token.text)) {
      throw new ExpressionSyntaxError(`unknown name '${token.text}'; an expression starts with ${ROOTS.join(', ')}, a function or a literal`, token.start);
    }
    const segments: Segment[] = [];
    let end = token.end;
    for (;;) {
      const following = peek();
      if (following?.text === '.') {
        next();
        const name = next();
        if (!name || (name.kind !== 'ident' && name.kind !== 'number')) throw new ExpressionSyntaxError(`expected a name after '.'`, name?.start ?? following.end);
        if (name.kind === 'number' && !/^\d+$/.test(name.text)) throw new ExpressionSyntaxError(`expected a name after '.'`, name.start);
        segments.push({ kind: 'field', name: name.text });
        end = name.end;
      } else if (following?.text === '[') {
        next();
        const inside = next();
        if (inside?.kind === 'punct' && inside.text === '*') segments.push({ kind: 'wildcard' });
        else if (inside?.kind === 'number' && Number.isInteger(inside.value) && (inside.value as number) >= 0) segments.push({ kind: 'index', index: inside.value as number });
        else if (inside?.kind === 'string') segments.push({ kind: 'field', name: inside.value as string });
        else throw new ExpressionSyntaxError(`expected an index, a quoted key or * inside [ ]`, inside?.start ?? following.end);
        end = expect(']').end;
      } else break;
      if (segments.length > LIMITS.depth * 4) throw new ExpressionSyntaxError('path too long', following.start);
    }
    return { kind: 'path', root: token.text, segments, start: token.start, end };
  }

  const result = expression(0);
  const rest = peek();
  if (rest) throw new ExpressionSyntaxError(`unexpected '${rest.text}' after the expression`, rest.start);
  return result;
}

/** A string from the recipe, split into literal text and expressions. */
export interface Template {
  parts: Array<string | { expr: Expr; source: string; offset: number }>;
  /** The string is one expression and nothing else: its value keeps its type. */
  whole: boolean;
}

/** Splits `a ${{ x }} b` into parts and parses each expression; errors carry their offset in the string. */
export function parseTemplate(text: string): Template {
  const parts: Template['parts'] = [];
  let at = 0;
  let count = 0;
  for (;;) {
    const open = text.indexOf('${{', at);
    if (open < 0) break;
    const close = text.indexOf('}}', open + 3);
    if (close < 0) throw new ExpressionSyntaxError("'${{' without a closing '}}'", open);
    if (++count > LIMITS.perString) throw new ExpressionSyntaxError(`more than ${LIMITS.perString} expressions in one string`, open);
    if (open > at) parts.push(text.slice(at, open));
    const inner = text.slice(open + 3, close);
    try {
      parts.push({ expr: parseExpression(inner), source: text.slice(open, close + 2), offset: open });
    } catch (error) {
      if (error instanceof ExpressionSyntaxError) throw new ExpressionSyntaxError(error.message, open + 3 + error.offset);
      throw error;
    }
    at = close + 2;
  }
  if (at < text.length) parts.push(text.slice(at));
  const expressions = parts.filter((p) => typeof p !== 'string');
  const whole = expressions.length === 1 && parts.every((p) => typeof p !== 'string' || p.trim() === '');
  return { parts, whole };
}

export const hasExpression = (text: string) => text.includes('${{');

/** What expressions can see. */
export interface Scope {
  inputs: Record<string, unknown>;
  steps: Record<string, { outputs: unknown }>;
  item?: unknown;
  index?: number;
  run: { id: string; dir: string };
  env: Record<string, string | undefined>;
}

/** A value an expression cannot work with at run time (a function given the wrong kind of value). */
export class ExpressionError extends Error {}

const BLOCKED = new Set(['__proto__', 'constructor', 'prototype']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Own data only: prototype keys are plain missing keys, and a missing key is null. */
function member(value: unknown, key: string): unknown {
  if (BLOCKED.has(key)) return null;
  if (Array.isArray(value)) return /^\d+$/.test(key) ? (value[Number(key)] ?? null) : null;
  if (isPlainObject(value) && Object.hasOwn(value, key)) return value[key] ?? null;
  return null;
}

function walk(value: unknown, segments: Segment[]): unknown {
  let current = value;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.kind === 'wildcard') {
      if (!Array.isArray(current)) return null;
      const rest = segments.slice(i + 1);
      // [*] maps the rest of the path over the list and flattens one level.
      return current.map((element) => walk(element, rest)).flat(1);
    }
    current = segment.kind === 'index' ? (Array.isArray(current) ? (current[segment.index] ?? null) : null) : member(current, segment.name);
    if (current === null) return null;
  }
  return current;
}

/** Text of a value inside a longer string: strings as they are, lists one item a line, objects as JSON. */
export function toText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(toText).join('\n');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function evaluate(expr: Expr, scope: Scope): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'path': {
      const base = expr.root === 'steps' ? scope.steps : expr.root === 'item' ? (scope.item ?? null) : expr.root === 'index' ? (scope.index ?? null) : (scope as unknown as Record<string, unknown>)[expr.root];
      return walk(base ?? null, expr.segments);
    }
    case 'call':
      return call(expr.name, expr.args.map((arg) => evaluate(arg, scope)));
  }
}

function call(name: FunctionName, args: unknown[]): unknown {
  const [first, second, third] = args;
  switch (name) {
    case 'join': {
      if (!Array.isArray(first)) throw new ExpressionError(`join() needs a list, got ${describe(first)}`);
      return first.map(toText).join(second === undefined ? ',' : toText(second));
    }
    case 'json':
      return JSON.stringify(first ?? null);
    case 'length':
      if (Array.isArray(first) || typeof first === 'string') return first.length;
      if (isPlainObject(first)) return Object.keys(first).length;
      if (first === null) return 0;
      throw new ExpressionError(`length() needs a list, text or object, got ${describe(first)}`);
    case 'default':
      return first === null || first === undefined || first === '' ? second : first;
    case 'slice': {
      if (!Array.isArray(first) && typeof first !== 'string') throw new ExpressionError(`slice() needs a list or text, got ${describe(first)}`);
      if (typeof second !== 'number' || (third !== undefined && typeof third !== 'number')) throw new ExpressionError('slice() takes whole-number start and end');
      return first.slice(second, third as number | undefined);
    }
  }
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `${typeof value === 'string' ? 'text' : `a ${typeof value}`}`;
}

/** The value of a template: the expression's own value when whole, else the text with each value rendered. */
export function render(template: Template, scope: Scope): unknown {
  if (template.whole) return evaluate((template.parts.find((p) => typeof p !== 'string') as { expr: Expr }).expr, scope);
  return template.parts.map((part) => (typeof part === 'string' ? part : toText(evaluate(part.expr, scope)))).join('');
}

/** Prints a path back as written, for messages. */
export function pathText(root: string, segments: readonly Segment[]): string {
  return segments.reduce(
    (text, s) =>
      text + (s.kind === 'wildcard' ? '[*]' : s.kind === 'index' ? `[${s.index}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s.name) ? `.${s.name}` : `['${s.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`),
    root,
  );
}
