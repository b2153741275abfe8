import type { ValueTemplate } from '../plan.js';
import { ExpressionError, render, type Scope } from '../expressions/expressions.js';
import { ok, type Result } from '../result.js';
import { failed, type StepFailure } from './failure.js';

/**
 * A recipe value with its expressions evaluated in `scope`; an expression that cannot be
 * evaluated is an `expression` failure of the step. Any other throw from the evaluator is a bug.
 */
export function renderValue(value: ValueTemplate, scope: Scope, where: string): Result<unknown, StepFailure> {
  switch (value.kind) {
    case 'literal':
      return ok(value.value);
    case 'list':
      return collect(value.items.map((item) => renderValue(item, scope, where)));
    case 'map': {
      const entries = Object.entries(value.entries);
      const rendered = collect(entries.map(([, item]) => renderValue(item, scope, where)));
      return rendered.ok ? ok(Object.fromEntries(entries.map(([key], n) => [key, rendered.value[n]]))) : rendered;
    }
    case 'template':
      try {
        return ok(render(value.template, scope));
      } catch (error) {
        if (error instanceof ExpressionError) return failed('expression', `${where}: ${error.message}`);
        throw error;
      }
  }
}

/** The values of a list of results, or the first failure among them. */
function collect(results: Array<Result<unknown, StepFailure>>): Result<unknown[], StepFailure> {
  const values: unknown[] = [];
  for (const result of results) {
    if (!result.ok) return result;
    values.push(result.value);
  }
  return ok(values);
}

/** Whether an `if` value lets the step run: false, null, 0, '' and 'false' do not. */
export function truthy(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '' && value.trim().toLowerCase() !== 'false';
  return Boolean(value);
}
