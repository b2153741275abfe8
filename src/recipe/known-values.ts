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

/** Whether each template reads inputs only, found once: a step's values are evaluated for every row. */
const knownByTemplate = new WeakMap<Template, boolean>();

const INPUTS_AND_ITEM: ReadonlySet<string> = new Set(['inputs', 'item', 'index']);
/** Whether each template reads inputs, `item` and `index` only: known for an item of a list known before the run. */
const knownForItemByTemplate = new WeakMap<Template, boolean>();

/** One item of a `for_each` whose list is known before the run (a literal list, or one made of inputs). */
export interface KnownItem {
  item: unknown;
  index: number;
}

/**
 * A template with an error of its own (an unknown input, a function given the wrong type): what it
 * gives is not worked out before the run, so that its error is not followed by others it caused
 * (`prompt must be a string, got null` after `unknown input 'titel'`). Such a recipe never runs.
 */
export const unknownAtPlanTime = (template: Template): void => {
  knownByTemplate.set(template, false);
  knownForItemByTemplate.set(template, false);
};

/** Whether a template reads only values rooted at `roots`, found once per template in `cache`. */
const readsOnlyOnce =
  (cache: WeakMap<Template, boolean>, roots: ReadonlySet<string>) =>
  (template: Template): boolean => {
    let known = cache.get(template);
    if (known === undefined) {
      known = template.parts.every((p) => typeof p === 'string' || readsOnly(p.expr, roots, { files: false }));
      cache.set(template, known);
    }
    return known;
  };

export const knownAtPlanTime = readsOnlyOnce(knownByTemplate, INPUTS_ONLY);
const knownForItem = readsOnlyOnce(knownForItemByTemplate, INPUTS_AND_ITEM);

/**
 * The value as far as the plan knows it: literals, and expressions over inputs evaluated with this
 * row's inputs (and, for an item of a list known before the run, its `item` and `index`); anything
 * else is UNKNOWN. Throws ExpressionError when such an expression cannot be evaluated (join() of a
 * number, say).
 */
export function knownValue(value: ValueTemplate, inputs: Record<string, unknown>, item?: KnownItem): unknown {
  switch (value.kind) {
    case 'literal':
      return value.value;
    case 'list':
      return value.items.map((entry) => knownValue(entry, inputs, item));
    case 'map': {
      const known: Record<string, unknown> = {};
      for (const key of Object.keys(value.entries)) ownEntry(known, key, knownValue(value.entries[key]!, inputs, item));
      return known;
    }
    case 'template': {
      if (!(item ? knownForItem : knownAtPlanTime)(value.template)) return UNKNOWN;
      const scope = { inputs, steps: {}, run: { id: '', dir: '' }, env: {} };
      return render(value.template, item ? { ...scope, item: item.item, index: item.index } : scope);
    }
  }
}

/**
 * The items of a `for_each` list in this row, when the whole list is known before the run (a
 * literal, or an expression over `inputs`); undefined when it is not, or is no list. An expression
 * that cannot be evaluated is reported where the step's runs are counted, not here.
 */
export function knownForEachItems(
  forEach: ValueTemplate | undefined,
  inputs: Record<string, unknown>,
): KnownItem[] | undefined {
  if (!forEach) return undefined;
  let list: unknown;
  try {
    list = knownValue(forEach, inputs);
  } catch (cause) {
    if (cause instanceof ExpressionError) return undefined;
    throw cause;
  }
  if (!Array.isArray(list) || list.includes(UNKNOWN)) return undefined;
  return list.map((item, index) => ({ item, index }));
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
