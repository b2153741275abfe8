import type { Template } from './template.js';
import type { Expr, FunctionName, Segment } from './syntax.js';

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
