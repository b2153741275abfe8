/**
 * An `if` that can never hold because of the rule it leaves out: one that calls no status function
 * means `success() && …`, so `steps.a.outcome == 'failure'` there holds only when `a` failed under
 * `continue_on_error` (its conclusion `success`); without that, the step never runs, without a word.
 * The GitHub Actions mistake this tool's `if` shares.
 */
import { callsStatus, type Expr, looselyEqual, pathText } from '../expressions/expressions.js';
import type { StepDraft } from './analyzer-types.js';
import { type Diagnostic, error } from './diagnostics.js';
import type { SourceFile } from './source.js';

/** The comparisons an `&&` chain requires, all of which must hold for it to. */
function required(expr: Expr): Expr[] {
  return expr.kind === 'binary' && expr.op === '&&' ? [...required(expr.left), ...required(expr.right)] : [expr];
}

/** `steps.X.outcome` or `steps.X.conclusion` compared with 'failure' by `==`: X and the field. */
function failureComparison(expr: Expr): { step: string; field: 'outcome' | 'conclusion'; path: string } | undefined {
  if (expr.kind !== 'binary' || expr.op !== '==') return undefined;
  for (const [path, other] of [
    [expr.left, expr.right],
    [expr.right, expr.left],
  ] as const) {
    if (path.kind !== 'path' || path.root !== 'steps' || other.kind !== 'literal') continue;
    if (!looselyEqual(other.value, 'failure')) continue;
    const [step, field] = path.segments;
    if (path.segments.length !== 2 || step?.kind !== 'field' || field?.kind !== 'field') continue;
    if (field.name !== 'outcome' && field.name !== 'conclusion') continue;
    return { step: step.name, field: field.name, path: pathText('steps', path.segments) };
  }
  return undefined;
}

export function checkIfsThatNeverHold(
  drafts: readonly StepDraft[],
  byId: ReadonlyMap<string, StepDraft>,
  file: SourceFile,
  diagnostics: Diagnostic[],
): void {
  for (const draft of drafts) {
    const condition = draft.if;
    if (condition?.kind !== 'template') continue;
    const parts = condition.template.parts.filter((part) => typeof part !== 'string');
    if (parts.some((part) => callsStatus(part.expr))) continue;
    // The whole `if` is one expression: text around it would make it always true (non-empty text).
    if (parts.length !== 1 || !condition.template.whole) continue;
    const [part] = parts;
    for (const comparison of required(part!.expr)) {
      const read = failureComparison(comparison);
      const step = read && byId.get(read.step);
      if (!read || !step) continue;
      // Under continue_on_error a failure concludes `success`: success() holds and the outcome is `failure`.
      if (read.field === 'outcome' && step.raw.continue_on_error === true) continue;
      const fix =
        read.field === 'outcome'
          ? `write failure() && ${read.path} == 'failure', or give ${read.step} continue_on_error: true`
          : step.raw.continue_on_error === true
            ? `${read.step} concludes success when it fails under continue_on_error: read steps.${read.step}.outcome`
            : `write failure() && ${read.path} == 'failure'`;
      diagnostics.push(
        error(
          file,
          file.locateWithin(['steps', draft.id, 'if'], part!.source),
          `${read.path} == 'failure' never holds here: an if that calls no status function runs only when the steps before it succeeded; ${fix}`,
        ),
      );
    }
  }
}
