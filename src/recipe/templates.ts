import { CREDENTIAL_VARIABLES } from '../credentials.js';
import { formatPatternProblem } from '../expressions/functions.js';
import type { ValueTemplate } from '../plan.js';
import { error, type Diagnostic } from './diagnostics.js';
import {
  didYouMean,
  ExpressionSyntaxError,
  type NameSuggester,
  hasExpression,
  looselyEqual,
  parseTemplate,
  pathText,
  STEP_CONCLUSIONS,
  type Expr,
  type Segment,
  type Template,
} from '../expressions/expressions.js';
import { callShape, operatorShape } from './expression-shapes.js';
import { ownEntry, UNKNOWN, unknownAtPlanTime } from './known-values.js';
import { ANY, BOOLEAN, followPath, INTEGER, NUMBER, object, STRING, type Shape, withValues } from './shapes.js';
import type { PathPart, SourceFile } from './source.js';

/** A `steps.X` reference found in a value: it makes an edge of the DAG. */
export interface Reference {
  step: string;
  /** Where the reference is written. */
  path: PathPart[];
  source: string;
}

/** Turns a recipe value into a template tree, reporting syntax errors and collecting step references. */
export function compileValue(
  value: unknown,
  path: PathPart[],
  file: SourceFile,
  diagnostics: Diagnostic[],
  references: Reference[],
): ValueTemplate {
  if (typeof value === 'string') {
    if (!hasExpression(value)) return { kind: 'literal', value };
    let template: Template;
    try {
      template = parseTemplate(value);
    } catch (cause) {
      if (!(cause instanceof ExpressionSyntaxError)) throw cause;
      const open = value.lastIndexOf('${{', cause.offset);
      const close = value.indexOf('}}', Math.max(open, 0));
      const needle = open >= 0 ? value.slice(open, close >= 0 ? close + 2 : undefined) : value;
      diagnostics.push(error(file, file.locateWithin(path, needle), `invalid expression: ${cause.message}`));
      // Not its text: checked as a value (a file to look for, a model field), it would add errors
      // that are only this one again. A recipe with an error never runs, so nothing reads it after.
      return { kind: 'literal', value: UNKNOWN };
    }
    for (const part of template.parts)
      if (typeof part !== 'string') collectReferences(part.expr, part.source, path, references);
    return { kind: 'template', template, text: value };
  }
  if (Array.isArray(value))
    return {
      kind: 'list',
      items: value.map((item, i) => compileValue(item, [...path, i], file, diagnostics, references)),
    };
  if (typeof value === 'object' && value !== null) {
    // A loop, not fromEntries over entries: every step's `with:` comes here (the same own keys, in order).
    const entries: Record<string, ValueTemplate> = {};
    for (const key of Object.keys(value))
      ownEntry(
        entries,
        key,
        compileValue((value as Record<string, unknown>)[key], [...path, key], file, diagnostics, references),
      );
    return { kind: 'map', entries };
  }
  return { kind: 'literal', value };
}

function collectReferences(expr: Expr, source: string, path: PathPart[], references: Reference[]): void {
  if (expr.kind === 'call') for (const arg of expr.args) collectReferences(arg, source, path, references);
  else if (expr.kind === 'binary')
    for (const side of [expr.left, expr.right]) collectReferences(side, source, path, references);
  else if (expr.kind === 'not') collectReferences(expr.operand, source, path, references);
  else if (expr.kind === 'access') collectReferences(expr.target, source, path, references);
  else if (expr.kind === 'path' && expr.root === 'steps') {
    const first = expr.segments[0];
    if (first?.kind === 'field') references.push({ step: first.name, path, source });
  }
}

/** Every template string inside a value, with its recipe path. */
export function* templateStrings(
  value: ValueTemplate,
  path: PathPart[],
): Generator<{ template: Template; text: string; path: PathPart[] }> {
  switch (value.kind) {
    case 'template':
      yield { template: value.template, text: value.text, path };
      break;
    case 'list':
      for (const [i, item] of value.items.entries()) yield* templateStrings(item, [...path, i]);
      break;
    case 'map':
      for (const [k, v] of Object.entries(value.entries)) yield* templateStrings(v, [...path, k]);
      break;
    default:
      break;
  }
}

/** What expressions in one place may refer to, with shapes. */
export interface TypeScope {
  inputs: Record<string, Shape>;
  steps: Map<string, Shape>;
  /** Suggestions for misspelt step and input names, shared by the whole recipe. */
  names: { steps: NameSuggester; inputs: NameSuggester };
  /** The step whose value this is, which may not refer to itself. */
  self?: string;
  /** The element shape of the step's `for_each`, when `item` is allowed here. */
  item?: Shape;
  /** Why `item` and `index` are not allowed here, where the step has a `for_each` all the same. */
  noItemBecause?: string;
  /** A step's `if`: the status functions (success(), failure()…) are allowed here. */
  statusFunctions?: boolean;
}

const RUN = object({ id: STRING, dir: STRING });
/** A step's outcome and conclusion. */
const CONCLUSION = withValues(STRING, STEP_CONCLUSIONS);
const STEP_FIELDS = ['outputs', 'outcome', 'conclusion'];

/** The shape of a template's value, reporting each reference the recipe cannot satisfy. */
export function checkTemplate(
  template: Template,
  path: PathPart[],
  scope: TypeScope,
  file: SourceFile,
  diagnostics: Diagnostic[],
): Shape {
  let shape: Shape = STRING;
  let wrong = false;
  for (const part of template.parts) {
    if (typeof part === 'string') continue;
    const report = (message: string) => {
      wrong = true;
      diagnostics.push(error(file, file.locateWithin(path, part.source), message));
    };
    const exprShape = shapeOf(part.expr, scope, report);
    if (template.whole) shape = exprShape;
  }
  if (wrong) unknownAtPlanTime(template);
  return shape;
}

function shapeOf(expr: Expr, scope: TypeScope, report: (message: string) => void): Shape {
  switch (expr.kind) {
    case 'literal':
      return typeof expr.value === 'string'
        ? STRING
        : typeof expr.value === 'number'
          ? NUMBER
          : typeof expr.value === 'boolean'
            ? BOOLEAN
            : { kind: 'null' };
    case 'call': {
      // A pattern written in the recipe is checked now: at run time a step before may have been paid for.
      const [pattern] = expr.args;
      if (expr.name === 'format' && pattern?.kind === 'literal' && typeof pattern.value === 'string') {
        const problem = formatPatternProblem(pattern.value, expr.args.length - 1);
        if (problem) report(problem);
      }
      return callShape(
        expr.name,
        expr.args.map((arg) => shapeOf(arg, scope, report)),
        scope.statusFunctions ?? false,
        report,
      );
    }
    case 'binary': {
      const left = shapeOf(expr.left, scope, report);
      const right = shapeOf(expr.right, scope, report);
      if (expr.op === '==' || expr.op === '!=') {
        checkComparedValue(expr.left, left, expr.right, report);
        checkComparedValue(expr.right, right, expr.left, report);
      }
      return operatorShape(expr.op, left, right, report);
    }
    case 'not':
      shapeOf(expr.operand, scope, report);
      return BOOLEAN;
    case 'access':
      return followOrReport(shapeOf(expr.target, scope, report), expr.segments, '(…)', report);
    case 'path':
      return pathShape(expr, scope, report);
  }
}

/**
 * `steps.X.outcome == 'failed'` (the outcome is `failure`) or `inputs.style == 'nior'` (an input
 * whose enum is noir and pastel) never holds: a step whose `if` it is would never run, without a
 * word. Compared as the run compares, text without regard to case.
 */
function checkComparedValue(expr: Expr, shape: Shape, other: Expr, report: (message: string) => void): void {
  const values = 'values' in shape ? shape.values : undefined;
  if (!values || other.kind !== 'literal') return;
  const literal = other.value;
  if (typeof literal !== 'string' && typeof literal !== 'number') return;
  if (values.some((value) => looselyEqual(value, literal))) return;
  const what = expr.kind === 'path' ? pathText(expr.root, expr.segments) : 'the value';
  const words = values.filter((value): value is string => typeof value === 'string');
  const hint = typeof literal === 'string' ? didYouMean(literal, words) || sameStem(literal, words) : '';
  report(
    `${what} is one of ${values.join(', ')}, never ${typeof literal === 'string' ? `'${literal}'` : literal}${hint}`,
  );
}

/**
 * `; did you mean 'failure'?` for another form of one word ('failed', 'succeeded', 'cancel'): too
 * far for a slip of the keyboard, but the one value that begins with the same four letters or more.
 */
function sameStem(literal: string, words: readonly string[]): string {
  const lower = literal.toLowerCase();
  const shared = (word: string) => {
    const other = word.toLowerCase();
    let n = 0;
    while (n < lower.length && n < other.length && lower[n] === other[n]) n++;
    return n;
  };
  const scored = words.map((word) => ({ word, length: shared(word) }));
  const longest = scored.reduce((most, { length }) => Math.max(most, length), 0);
  const closest = scored.filter(({ length }) => length === longest).map(({ word }) => word);
  return longest >= 4 && closest.length === 1 ? `; did you mean '${closest[0]}'?` : '';
}

function pathShape(expr: Extract<Expr, { kind: 'path' }>, scope: TypeScope, report: (message: string) => void): Shape {
  const [first, ...rest] = expr.segments;
  const follow = (shape: Shape, segments: Segment[], root: string) => followOrReport(shape, segments, root, report);
  switch (expr.root) {
    case 'inputs': {
      if (first?.kind !== 'field') return follow(object(scope.inputs), expr.segments, 'inputs');
      // Own entries only: `inputs.toString` is no input.
      const input = Object.hasOwn(scope.inputs, first.name) ? scope.inputs[first.name] : undefined;
      if (!input) {
        const hint = scope.names.inputs.hint(first.name);
        const list = scope.names.inputs.count()
          ? `${hint ? ' The' : '; the'} inputs are ${scope.names.inputs.list()}`
          : '; the recipe has no inputs';
        report(`unknown input '${first.name}'${hint}${list}`);
        return ANY;
      }
      return follow(input, rest, `inputs.${first.name}`);
    }
    case 'steps':
      return stepPathShape(expr.segments, scope, report);
    case 'item':
      if (!scope.item) {
        report(`item ${scope.noItemBecause ?? 'is defined only in a step with for_each'}`);
        return ANY;
      }
      return follow(scope.item, expr.segments, 'item');
    case 'index':
      if (!scope.item) report(`index ${scope.noItemBecause ?? 'is defined only in a step with for_each'}`);
      if (expr.segments.length > 0) report(`index is a number and has no ${pathText('', expr.segments)}`);
      return INTEGER;
    case 'run':
      return follow(RUN, expr.segments, 'run');
    case 'env':
      // By name only: the whole of it could carry every variable of the machine, a CI job's tokens
      // among them, into the outputs, the journal and the report.
      if (first?.kind !== 'field') {
        report(
          "env is read by name, as env.NAME: the whole environment could carry every variable of this machine (a CI job's tokens among them) into the outputs",
        );
        return STRING;
      }
      if (CREDENTIAL_VARIABLES.has(first.name)) {
        report(`env.${first.name} is a credential of pipeline's own and cannot be used in a recipe`);
        return STRING;
      }
      return expr.segments.length === 1 ? STRING : follow(STRING, rest, `env.${first.name}`);
    default:
      return ANY;
  }
}

/** `steps.ID.outputs…`: the step must exist, be another step, and be read through its outputs. */
function stepPathShape(segments: Segment[], scope: TypeScope, report: (message: string) => void): Shape {
  const [first, second, ...after] = segments;
  if (first?.kind !== 'field') {
    report('a step reference names the step: steps.ID.outputs');
    return ANY;
  }
  if (first.name === scope.self) {
    report(`step '${first.name}' cannot refer to its own outputs`);
    return ANY;
  }
  const outputs = scope.steps.get(first.name);
  if (!outputs) {
    const hint = scope.names.steps.hint(first.name, scope.self);
    const others = scope.names.steps.count(scope.self)
      ? `${hint ? ' The' : '; the'} other steps are ${scope.names.steps.list(scope.self)}`
      : '';
    report(`unknown step '${first.name}'${hint}${others}`);
    return ANY;
  }
  if (second === undefined) return object({ outputs, outcome: CONCLUSION, conclusion: CONCLUSION });
  if (second.kind === 'field' && (second.name === 'outcome' || second.name === 'conclusion')) {
    return followOrReport(CONCLUSION, after, `steps.${first.name}.${second.name}`, report);
  }
  if (second.kind !== 'field' || second.name !== 'outputs') {
    const name = second.kind === 'field' ? second.name : undefined;
    const isOutput = name !== undefined && outputs.kind === 'object' && Object.hasOwn(outputs.fields, name);
    const hint = isOutput
      ? `; did you mean steps.${first.name}.outputs.${name}?`
      : name
        ? didYouMean(name, STEP_FIELDS)
        : '';
    report(
      `steps.${first.name} has no ${name ? `field '${name}'` : pathText('', [second])}${hint}${hint ? ' It' : '; it'} has ${STEP_FIELDS.join(', ')}`,
    );
    return ANY;
  }
  return followOrReport(outputs, after, `steps.${first.name}.outputs`, report);
}

/** The shape at the end of a path, or ANY once the problem on the way is reported. */
function followOrReport(shape: Shape, segments: Segment[], root: string, report: (message: string) => void): Shape {
  const checked = followPath(shape, segments, root);
  if (!checked.ok) {
    report(checked.message);
    return ANY;
  }
  return checked.shape;
}
