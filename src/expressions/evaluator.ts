import { callFunction, ExpressionError, type FunctionHost, isPlainObject, toText } from './functions.js';
import { applyOperator, isTruthy } from './operators.js';
import type { Template } from './template.js';
import type { Expr, Segment } from './syntax.js';

export { ExpressionError, toText };

/** What expressions can see. */
export interface Scope extends FunctionHost {
  inputs: Record<string, unknown>;
  /** The steps this value may read: their outputs, and (once they ended) outcome and conclusion. */
  steps: Record<string, { outputs: unknown; outcome?: StepConclusion; conclusion?: StepConclusion }>;
  item?: unknown;
  index?: number;
  run: { id: string; dir: string };
  env: Record<string, string | undefined>;
}

/** How a step ended, in the words of GitHub Actions' `steps.<id>.outcome` and `conclusion`. */
/** What a step's `outcome` and `conclusion` can be. */
export const STEP_CONCLUSIONS = ['success', 'failure', 'cancelled', 'skipped'] as const;
export type StepConclusion = (typeof STEP_CONCLUSIONS)[number];

const BLOCKED = new Set(['__proto__', 'constructor', 'prototype']);

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
      return current.flatMap((element) => walk(element, rest));
    }
    current =
      segment.kind === 'index'
        ? Array.isArray(current)
          ? (current[segment.index] ?? null)
          : null
        : member(current, segment.name);
    if (current === null) return null;
  }
  return current;
}

export function evaluate(expr: Expr, scope: Scope): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'path': {
      const base =
        expr.root === 'steps'
          ? scope.steps
          : expr.root === 'item'
            ? (scope.item ?? null)
            : expr.root === 'index'
              ? (scope.index ?? null)
              : (scope as unknown as Record<string, unknown>)[expr.root];
      return walk(base ?? null, expr.segments);
    }
    case 'call':
      return callFunction(
        expr.name,
        expr.args.map((arg) => evaluate(arg, scope)),
        scope,
      );
    case 'access':
      return walk(evaluate(expr.target, scope), expr.segments);
    case 'not':
      return !isTruthy(evaluate(expr.operand, scope));
    case 'binary':
      return applyOperator(expr.op, evaluate(expr.left, scope), () => evaluate(expr.right, scope));
  }
}

/** The value of a template: the expression's own value when whole, else the text with each value rendered. */
export function render(template: Template, scope: Scope): unknown {
  if (template.whole)
    return evaluate((template.parts.find((p) => typeof p !== 'string') as { expr: Expr }).expr, scope);
  return template.parts.map((part) => (typeof part === 'string' ? part : toText(evaluate(part.expr, scope)))).join('');
}
