import type { ValueTemplate } from '../plan.js';
import type { StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import { ANY, BOOLEAN, describeShape, list, NUMBER, object, STRING, type Shape } from './shapes.js';
import { checkRunQuoting } from './run-quoting.js';
import type { PathPart, SourceFile } from './source.js';
import { checkTemplate, type TypeScope } from './templates.js';

/** Why a step's `if` may not read `item`, though the step has a `for_each`. */
const NO_ITEM_IN_IF =
  "is not available in this step's if: its condition is decided once for the whole step. It is decided per item, and may read item and index, where the step's items flow from an earlier step's items (for_each over steps.X.outputs, with item_flow on)";

/** A step's expressions checked against the shapes of the inputs and the other steps' outputs. */
export function checkStepExpressions(
  draft: StepDraft,
  recipeScope: Pick<TypeScope, 'inputs' | 'steps' | 'names'>,
  file: SourceFile,
  diagnostics: Diagnostic[],
  /** The step runs item by item from another step's items: its `if` is evaluated per item, and may read `item`. */
  itemInIf = false,
): void {
  const stepPath: PathPart[] = ['steps', draft.id];
  // Named one by one, not spread: once per step.
  const scope: TypeScope = {
    inputs: recipeScope.inputs,
    steps: recipeScope.steps,
    names: recipeScope.names,
    self: draft.id,
  };
  let item: Shape | undefined;
  if (draft.forEach) {
    const listShape = valueShape(draft.forEach, [...stepPath, 'for_each'], scope, file, diagnostics);
    if (listShape.kind === 'list') item = listShape.items;
    else {
      if (listShape.kind !== 'any') {
        diagnostics.push(
          error(
            file,
            file.locate([...stepPath, 'for_each']),
            `for_each must give a list, but this is ${describeShape(listShape)}`,
          ),
        );
        draft.forEachReported = true;
      }
      item = ANY;
    }
  }
  const inner: TypeScope = item ? { ...scope, item } : scope;
  if (draft.if)
    valueShape(
      draft.if,
      [...stepPath, 'if'],
      {
        ...(itemInIf ? inner : scope),
        statusFunctions: true,
        ...(item && !itemInIf ? { noItemBecause: NO_ITEM_IN_IF } : {}),
      },
      file,
      diagnostics,
    );
  const fieldShapes = new Map<string, Shape>();
  if (draft.with.kind === 'map') {
    for (const field of Object.keys(draft.with.entries)) {
      const fieldValue = draft.with.entries[field]!;
      const shape = valueShape(fieldValue, [...stepPath, 'with', field], inner, file, diagnostics);
      // A literal is judged by the model's schema with its value (model-rows.ts): one error, not two.
      if (fieldValue.kind !== 'literal') fieldShapes.set(field, shape);
    }
  }
  if (draft.run) {
    valueShape(draft.run, [...stepPath, 'run'], inner, file, diagnostics);
    checkRunQuoting(draft.run, [...stepPath, 'run'], file, diagnostics);
  }
  if (draft.inputSchema) checkFieldShapes(draft, fieldShapes, file, diagnostics);
}

/** The shape a value gives, its expressions checked on the way. */
export function valueShape(
  value: ValueTemplate,
  path: PathPart[],
  scope: TypeScope,
  file: SourceFile,
  diagnostics: Diagnostic[],
): Shape {
  if (value.kind === 'template') return checkTemplate(value.template, path, scope, file, diagnostics);
  if (value.kind === 'literal') return literalShape(value.value);
  // Written out in the recipe, with expressions inside: a list of what its items give, or an object
  // of exactly the fields written (so `item.q` over `[{p: …}]` is found before the run).
  if (value.kind === 'list')
    return list(commonShape(value.items.map((item, i) => valueShape(item, [...path, i], scope, file, diagnostics))));
  const fields: Record<string, Shape> = {};
  for (const [key, entry] of Object.entries(value.entries))
    fields[key] = valueShape(entry, [...path, key], scope, file, diagnostics);
  return object(fields);
}

/** The shape of a value written out in the recipe: text, a number, an object of its fields, a list of its items' common shape. */
function literalShape(literal: unknown): Shape {
  if (typeof literal === 'string') return STRING;
  if (typeof literal === 'number') return NUMBER;
  if (typeof literal === 'boolean') return BOOLEAN;
  if (Array.isArray(literal)) return list(commonShape(literal.map(literalShape)));
  if (literal === null || typeof literal !== 'object') return ANY;
  const fields: Record<string, Shape> = {};
  for (const [key, entry] of Object.entries(literal)) fields[key] = literalShape(entry);
  return object(fields);
}

/**
 * What every one of `shapes` is, for a list's items: objects have every field any of them has
 * (one that some lack may be null there, so it is anything), like scalars their kind; else anything.
 */
function commonShape(shapes: Shape[]): Shape {
  const [first, ...rest] = shapes;
  if (!first) return ANY;
  if (first.kind === 'object') {
    const objects = shapes.filter((shape) => shape.kind === 'object');
    if (objects.length < shapes.length) return ANY;
    const fields: Record<string, Shape> = {};
    for (const name of new Set(objects.flatMap((shape) => Object.keys(shape.fields)))) {
      const each = objects.map((shape) => (Object.hasOwn(shape.fields, name) ? shape.fields[name] : undefined));
      fields[name] = each.every((field) => field !== undefined) ? commonShape(each as Shape[]) : ANY;
    }
    return object(
      fields,
      objects.some((shape) => shape.open),
    );
  }
  const scalar = first.kind === 'string' || first.kind === 'number' || first.kind === 'boolean';
  return scalar && rest.every((shape) => shape.kind === first.kind) ? first : ANY;
}

/** A whole-expression field whose shape the model's schema cannot take: caught before anything runs. */
function checkFieldShapes(
  draft: StepDraft,
  shapes: Map<string, Shape>,
  file: SourceFile,
  diagnostics: Diagnostic[],
): void {
  const properties = (draft.inputSchema?.properties ?? {}) as Record<string, { type?: string }>;
  for (const [field, shape] of shapes) {
    const type = properties[field]?.type;
    if (!type || shape.kind === 'any') continue;
    const fits =
      type === 'string'
        ? shape.kind === 'string' || shape.kind === 'number' || shape.kind === 'integer' || shape.kind === 'boolean'
        : type === 'array'
          ? shape.kind === 'list'
          : type === 'integer' || type === 'number'
            ? shape.kind === 'integer' || shape.kind === 'number'
            : type === 'boolean'
              ? shape.kind === 'boolean'
              : type === 'object'
                ? shape.kind === 'object'
                : true;
    if (!fits)
      diagnostics.push(
        error(
          file,
          file.locate(['steps', draft.id, 'with', field]),
          `${field} takes ${type === 'array' ? 'a list' : type === 'string' ? 'text' : type === 'object' ? 'an object' : type === 'integer' ? 'an integer' : `a ${type}`}, but this gives ${describeShape(shape)}`,
        ),
      );
  }
}
