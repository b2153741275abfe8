import type { ValueTemplate } from '../plan.js';
import { ExpressionError, render, STATUS_FUNCTIONS, type Expr, type Template } from '../expressions/expressions.js';

/**
 * Stands for a value known only at run time (a step's output, `item`, the run's folder). A symbol,
 * so that no value a recipe can write is ever taken for it.
 */
export const UNKNOWN: unique symbol = Symbol('known at run time');
export type RunTimeValue = typeof UNKNOWN;

/**
 * Whether the expression reads only values rooted at `roots` (`inputs`, or also `item`, `env`, the
 * cached `steps`…), and no step status; `hashFiles` only with `files`. The one rule for what can be
 * evaluated before a run, used by the analyzer (inputs only) and by the cache forecast of `plan`.
 */
export function readsOnly(expr: Expr, roots: ReadonlySet<string>, options: { files: boolean }): boolean {
  switch (expr.kind) {
    case 'literal':
      return true;
    case 'call':
      return (
        !STATUS_FUNCTIONS.has(expr.name) &&
        (options.files || expr.name !== 'hashFiles') &&
        expr.args.every((arg) => readsOnly(arg, roots, options))
      );
    case 'binary':
      return readsOnly(expr.left, roots, options) && readsOnly(expr.right, roots, options);
    case 'not':
      return readsOnly(expr.operand, roots, options);
    case 'access':
      return readsOnly(expr.target, roots, options);
    case 'path':
      return roots.has(expr.root);
  }
}

const INPUTS_ONLY: ReadonlySet<string> = new Set(['inputs']);

/** Whether the expression can be evaluated before the run: it reads inputs only, and no files or step states. */
const onlyInputs = (expr: Expr) => readsOnly(expr, INPUTS_ONLY, { files: false });

/** Whether each template reads inputs only, found once: a step's values are evaluated for every row. */
const knownByTemplate = new WeakMap<Template, boolean>();

/**
 * A template with an error of its own (an unknown input, a function given the wrong type): what it
 * gives is not worked out before the run, so that its error is not followed by others it caused
 * (`prompt must be a string, got null` after `unknown input 'titel'`). Such a recipe never runs.
 */
export const unknownAtPlanTime = (template: Template): void => {
  knownByTemplate.set(template, false);
};

export const knownAtPlanTime = (template: Template): boolean => {
  let known = knownByTemplate.get(template);
  if (known === undefined) {
    known = template.parts.every((p) => typeof p === 'string' || onlyInputs(p.expr));
    knownByTemplate.set(template, known);
  }
  return known;
};

/**
 * The value as far as the plan knows it: literals, and expressions over inputs evaluated with this
 * row's inputs; anything else is UNKNOWN. Throws ExpressionError when an input-only expression
 * cannot be evaluated (join() of a number, say).
 */
export function knownValue(value: ValueTemplate, inputs: Record<string, unknown>): unknown {
  switch (value.kind) {
    case 'literal':
      return value.value;
    case 'list':
      return value.items.map((item) => knownValue(item, inputs));
    case 'map': {
      const known: Record<string, unknown> = {};
      for (const key of Object.keys(value.entries)) ownEntry(known, key, knownValue(value.entries[key]!, inputs));
      return known;
    }
    case 'template':
      if (!knownAtPlanTime(value.template)) return UNKNOWN;
      return render(value.template, { inputs, steps: {}, run: { id: '', dir: '' }, env: {} });
  }
}

/** Whether `path` inside `value` is (or passes through) a run-time value. */
export function isUnknownAt(value: unknown, path: ReadonlyArray<string | number>): boolean {
  let current = value;
  for (const part of path) {
    if (current === UNKNOWN) return true;
    if (typeof current !== 'object' || current === null) return false;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current === UNKNOWN;
}

export { ExpressionError };

/** Sets an own entry, as Object.fromEntries does: a key `__proto__` is an entry, not the object's prototype. */
export function ownEntry(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
