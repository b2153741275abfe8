import type { Expr } from '../expressions/expressions.js';
import { isLocalPath, meantText, validateModelInput } from '../model-schemas/validate.js';
import type { ValueTemplate } from '../plan.js';
import type { StepDraft } from './analyzer-types.js';
import { wrongMediaBytes, wrongMediaKind } from '../files/media-kind.js';
import { checkFile, type FileProbe } from './inputs.js';
import { ExpressionError, isUnknownAt, type KnownItem, knownForEachItems, knownValue } from './known-values.js';
import type { PathPart } from './source.js';

/** One problem with a step's input for one row, at its place in the recipe. */
export interface StepInputProblem {
  /** Where in the recipe, and whether the key or the value is meant. */
  path: PathPart[];
  which: 'key' | 'value';
  message: string;
  /** The recipe inputs the faulty value is made from: none when the recipe alone is at fault. */
  fromInputs: string[];
  /** For a model's schema: the model field at fault and what is wrong with it. */
  model?: { slug: string; field: string; problem: string };
}

/**
 * The action's input as far as it is known for this row, checked against its schema; local files
 * checked on disk. Where the step's `for_each` list is known before the run, each item's input is
 * checked (a missing file among `for_each: ${{ inputs.pictures }}`), each problem named once.
 */
export function stepInputProblems(
  draft: StepDraft,
  row: Record<string, unknown>,
  recipeDir: string,
  cwd: string,
  probe: FileProbe,
): StepInputProblem[] {
  const general = inputProblems(draft, row, undefined, recipeDir, cwd, probe);
  const items = knownForEachItems(draft.forEach, row);
  if (!items?.length) return general;
  // A problem that only an item shows comes of the list, and so of the inputs the list is made of:
  // a batch row whose `pictures` name a missing file is that row's fault (--skip-invalid-rows).
  const listInputs = inputsReadAt(draft.forEach!, []);
  const keyOf = (problem: StepInputProblem) => `${problem.path.join('\u0000')}\u0000${problem.message}`;
  const named = new Set(general.map(keyOf));
  const problems = [...general];
  for (const item of items)
    for (const problem of inputProblems(draft, row, item, recipeDir, cwd, probe)) {
      const key = keyOf(problem);
      if (named.has(key)) continue;
      named.add(key);
      problems.push({ ...problem, fromInputs: [...new Set([...problem.fromInputs, ...listInputs])] });
    }
  return problems;
}

function inputProblems(
  draft: StepDraft,
  row: Record<string, unknown>,
  item: KnownItem | undefined,
  recipeDir: string,
  cwd: string,
  probe: FileProbe,
): StepInputProblem[] {
  const withPath: PathPart[] = ['steps', draft.id, 'with'];
  let value: unknown;
  try {
    value = knownValue(draft.with, row, item);
  } catch (cause) {
    if (!(cause instanceof ExpressionError)) throw cause;
    return [{ path: withPath, which: 'value', message: cause.message, fromInputs: [] }];
  }
  const input = value as Record<string, unknown>;
  const problems: StepInputProblem[] = [];
  for (const media of draft.mediaFields) {
    // A copy: the list may be the row's own (`image: ${{ inputs.pictures }}`), which the run sends.
    const fieldValue = Array.isArray(input[media.field]) ? [...(input[media.field] as unknown[])] : input[media.field];
    input[media.field] = fieldValue;
    const entries =
      media.list && Array.isArray(fieldValue)
        ? fieldValue.map((v, i) => [v, [media.field, i]] as const)
        : [[fieldValue, [media.field]] as const];
    for (const [entry, at] of entries) {
      if (typeof entry !== 'string' || !isLocalPath(entry)) continue;
      const checked = checkFile(entry, recipeDir, probe, cwd, 'media');
      // A video in an image field was submitted, failed by the gateway, and retried.
      const wrongKind = checked.problem
        ? undefined
        : (wrongMediaKind(entry, media.media) ??
          (checked.mime === undefined ? undefined : wrongMediaBytes(entry, checked.mime, media.media)));
      if (wrongKind) checked.problem = wrongKind;
      if (checked.problem)
        problems.push({
          path: [...withPath, ...at],
          which: 'value',
          message: checked.problem,
          fromInputs: inputsReadAt(draft.with, at),
        });
      // A local file becomes a URL once uploaded; the schema sees a stand-in.
      if (media.list && Array.isArray(fieldValue))
        (fieldValue as unknown[])[at[1] as number] = `https://upload.invalid/${encodeURIComponent(entry)}`;
      else input[media.field] = `https://upload.invalid/${encodeURIComponent(entry)}`;
    }
  }
  // A value known only at run time is checked then: its problems are left out before they are worded.
  for (const problem of validateModelInput(draft.inputSchema!, input, (path) => isUnknownAt(input, path))) {
    const required = problem.message === 'is required';
    const slug = draft.model ? ` (${draft.model.slug})` : '';
    problems.push({
      path: !required ? [...withPath, ...problem.path] : draft.raw.with === undefined ? ['steps', draft.id] : withPath,
      which: required ? 'key' : problem.at,
      message: `${problem.field} ${problem.message}${slug}${meantText(problem)}`,
      fromInputs: required ? [] : inputsReadAt(draft.with, problem.path),
      ...(draft.model ? { model: { slug: draft.model.slug, field: problem.field, problem: problem.message } } : {}),
    });
  }
  return problems;
}

/** Whether the plan knows the step does not run in this row: its `if` is false, or its `for_each` list empty. */
/** Whether the step's `if` is known, before the run, to be false in this row (so it runs 0 times there). */
export function ifFalseInRow(draft: StepDraft, row: Record<string, unknown>): boolean {
  if (!draft.if) return false;
  try {
    return knownValue(draft.if, row) === false;
  } catch (cause) {
    if (cause instanceof ExpressionError) return false;
    throw cause;
  }
}

export function neverRunsInRow(draft: StepDraft, row: Record<string, unknown>): boolean {
  if (ifFalseInRow(draft, row)) return true;
  try {
    const items = draft.forEach ? knownValue(draft.forEach, row) : undefined;
    return Array.isArray(items) && items.length === 0;
  } catch (cause) {
    // An expression that cannot be evaluated is reported where the step's runs are counted.
    if (!(cause instanceof ExpressionError)) throw cause;
    return false;
  }
}

/**
 * The recipe inputs that the value at `path` of a step's `with:` is made from: those its
 * expression reads, where the walk down the template meets one.
 */
export function inputsReadAt(value: ValueTemplate, path: ReadonlyArray<string | number>): string[] {
  let current: ValueTemplate | undefined = value;
  for (const part of path) {
    if (current.kind === 'template') break;
    if (current.kind === 'map') current = current.entries[String(part)];
    else if (current.kind === 'list' && typeof part === 'number') current = current.items[part];
    else return [];
    if (!current) return [];
  }
  if (current.kind !== 'template') return [];
  const names = new Set<string>();
  for (const part of current.template.parts) if (typeof part !== 'string') collectInputs(part.expr, names);
  return [...names];
}

function collectInputs(expr: Expr, names: Set<string>): void {
  if (expr.kind === 'call') for (const arg of expr.args) collectInputs(arg, names);
  else if (expr.kind === 'binary') for (const side of [expr.left, expr.right]) collectInputs(side, names);
  else if (expr.kind === 'not') collectInputs(expr.operand, names);
  else if (expr.kind === 'access') collectInputs(expr.target, names);
  else if (expr.kind === 'path' && expr.root === 'inputs') {
    const first = expr.segments[0];
    if (first?.kind === 'field') names.add(first.name);
  }
}
