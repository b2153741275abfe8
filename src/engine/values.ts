import type { ValueTemplate } from '../plan.js';
import { ExpressionError, render, type Scope } from '../expressions/expressions.js';
import { failWith } from './failure.js';

/** A recipe value with its expressions evaluated in `scope`; an expression that cannot be evaluated fails the step. */
export function renderValue(value: ValueTemplate, scope: Scope, where: string): unknown {
  switch (value.kind) {
    case 'literal':
      return value.value;
    case 'list':
      return value.items.map((item) => renderValue(item, scope, where));
    case 'map':
      return Object.fromEntries(Object.entries(value.entries).map(([k, v]) => [k, renderValue(v, scope, where)]));
    case 'template':
      try {
        return render(value.template, scope);
      } catch (error) {
        if (error instanceof ExpressionError) failWith({ reason: 'expression', message: `${where}: ${error.message}`, retryable: false, outcomeUnknown: false });
        throw error;
      }
  }
}

/** Whether an `if` value lets the step run: false, null, 0, '' and 'false' do not. */
export function truthy(value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== '' && value.trim().toLowerCase() !== 'false';
  return Boolean(value);
}
