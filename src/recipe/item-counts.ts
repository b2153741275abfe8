/**
 * Run counts that follow from other steps: a step iterating another step's items has that step's
 * count, and a list an LLM step's JSON schema fixes (`minItems` = `maxItems`) has that length. So
 * `plan` can price chains whose first `for_each` is known before the run.
 */
import type { Expr } from '../expressions/expressions.js';
import type { InputRows, PlannedStep, ValueTemplate } from '../plan.js';
import { knownValue } from './known-values.js';

type Runs = PlannedStep['runs'];

/** Fills in the `dynamic` runs that lineage or a schema make known; steps are in topological order. */
export function countThroughChains(steps: PlannedStep[], rows: InputRows): void {
  const byId = new Map(steps.map((s) => [s.id as string, s]));
  for (const step of steps) {
    if (!step.runs.includes('dynamic')) continue;
    const counts = step.itemsFrom ? byId.get(step.itemsFrom.step)?.runs : forEachCounts(step, byId, rows);
    if (!counts) continue;
    step.runs = step.runs.map((runs, row) => (runs === 'dynamic' ? (counts[row] ?? 'dynamic') : runs));
  }
}

/** The counts of a `for_each` that is one expression: see listCounts. */
function forEachCounts(step: PlannedStep, byId: Map<string, PlannedStep>, rows: InputRows): Runs | undefined {
  const forEach = step.forEach;
  if (forEach?.kind !== 'template' || !forEach.template.whole) return undefined;
  const part = forEach.template.parts.find((p) => typeof p !== 'string');
  return part && typeof part !== 'string' ? listCounts(part.expr, byId, rows) : undefined;
}

/**
 * The length, row by row, of a list whose length the plan knows from earlier steps: all of a step's
 * outputs (`steps.bg.outputs`, the step's count), a list an LLM step's schema fixes, or `slice()`
 * of either by whole numbers (`slice(steps.bg.outputs, 0, 2)`).
 */
function listCounts(expr: Expr, byId: Map<string, PlannedStep>, rows: InputRows): Runs | undefined {
  if (expr.kind === 'call' && expr.name === 'slice') {
    const [list, start, end] = expr.args;
    const bound = (arg: Expr | undefined) =>
      arg?.kind === 'literal' && typeof arg.value === 'number' && Number.isInteger(arg.value) ? arg.value : undefined;
    const from = bound(start);
    const to = end === undefined ? null : bound(end);
    const counts = list && listCounts(list, byId, rows);
    if (!counts || from === undefined || to === undefined) return undefined;
    return counts.map((count) => (typeof count === 'number' ? sliceLength(count, from, to) : count));
  }
  if (expr.kind !== 'path' || expr.root !== 'steps') return undefined;
  const [id, outputs] = expr.segments;
  if (expr.segments.length === 2 && id?.kind === 'field' && outputs?.kind === 'field' && outputs.name === 'outputs') {
    const from = byId.get(id.name);
    return from?.forEach ? from.runs : undefined;
  }
  return schemaCounts(expr, byId, rows);
}

/** How many values `slice(start, end)` keeps of a list of `length` (end null: to its end), as JavaScript's. */
function sliceLength(length: number, start: number, end: number | null): number {
  const at = (index: number) => (index < 0 ? Math.max(length + index, 0) : Math.min(index, length));
  return Math.max(0, at(end ?? length) - at(start));
}

/**
 * `for_each: ${{ steps.B.outputs.json.a.b }}` over an LLM step B whose schema fixes the list's
 * length; or a projection of its items, `json.shots[*].prompt`, where what each item gives is not a
 * list (`[*]` flattens one level: a list per item would change the count).
 */
function schemaCounts(
  path: Extract<Expr, { kind: 'path' }>,
  byId: Map<string, PlannedStep>,
  rows: InputRows,
): Runs | undefined {
  const [id, outputs, json, ...rest] = path.segments;
  if (id?.kind !== 'field' || outputs?.kind !== 'field' || outputs.name !== 'outputs') return undefined;
  const star = rest.findIndex((s) => s.kind === 'wildcard');
  const fields = star < 0 ? rest : rest.slice(0, star);
  const projection = star < 0 ? undefined : rest.slice(star + 1);
  if (
    json?.kind !== 'field' ||
    json.name !== 'json' ||
    [...fields, ...(projection ?? [])].some((f) => f.kind !== 'field')
  )
    return undefined;
  const llm = byId.get(id.name);
  if (llm?.action !== 'llm' || llm.forEach || llm.with.kind !== 'map' || !llm.with.entries.schema) return undefined;
  const schemaValue = llm.with.entries.schema;
  const counts: Runs = [];
  for (const [index, row] of rows.entries())
    counts.push(
      schemaCount(
        llm.runs[index],
        schemaValue,
        fields as Array<{ name: string }>,
        row,
        projection as Array<{ name: string }> | undefined,
      ),
    );
  return counts;
}

/** The schema of a property path under `node` (its `properties`, field by field), or undefined. */
function propertyAt(node: unknown, fields: ReadonlyArray<{ name: string }>): unknown {
  for (const field of fields) {
    const properties = (node as { properties?: Record<string, unknown> } | null)?.properties;
    node = properties && Object.hasOwn(properties, field.name) ? properties[field.name] : undefined;
  }
  return node;
}

/** Whether a schema's values are never lists: its `type` is given, and is not (or does not include) `array`. */
function neverList(node: unknown): boolean {
  const type = (node as { type?: unknown } | undefined)?.type;
  if (typeof type === 'string') return type !== 'array';
  return Array.isArray(type) && type.length > 0 && !type.includes('array');
}

/** The list length an LLM step's schema fixes in a row where the step runs once, or `dynamic`. */
function schemaCount(
  runs: Runs[number] | undefined,
  schemaValue: ValueTemplate,
  fields: ReadonlyArray<{ name: string }>,
  row: Record<string, unknown>,
  projection?: ReadonlyArray<{ name: string }>,
): Runs[number] {
  if (runs !== 1) return runs ?? 'dynamic';
  let schema: unknown;
  try {
    schema = knownValue(schemaValue, row);
  } catch {
    return 'dynamic';
  }
  const node = propertyAt(schema, fields);
  if (projection && !neverList(propertyAt((node as { items?: unknown } | undefined)?.items, projection)))
    return 'dynamic';
  const { minItems, maxItems } = (node ?? {}) as { minItems?: unknown; maxItems?: unknown };
  return Number.isInteger(minItems) && minItems === maxItems ? (minItems as number) : 'dynamic';
}
