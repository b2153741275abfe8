import { NameSuggester, pathText, type Segment } from '../expressions/expressions.js';

/** What the analyzer knows of a value before anything runs. */
export type Shape =
  | { kind: 'any' }
  | {
      kind: 'string' | 'number' | 'integer' | 'boolean' | 'null';
      /** The only values it takes, where an input's or a schema's `enum` lists them. */
      values?: readonly EnumValue[];
    }
  | { kind: 'list'; items: Shape }
  | { kind: 'object'; fields: Record<string, Shape>; open: boolean };

/** A value an `enum` may list and a comparison can name. */
export type EnumValue = string | number | boolean;

const isEnumValue = (value: unknown): value is EnumValue => ['string', 'number', 'boolean'].includes(typeof value);

/**
 * A scalar shape that takes only the values of `allowed` (an input's or a JSON schema's `enum`),
 * when it is a list of such values; the shape as it is otherwise.
 */
export function withValues(shape: Shape, allowed: unknown): Shape {
  if (!Array.isArray(allowed) || allowed.length === 0 || !allowed.every(isEnumValue)) return shape;
  if (!['string', 'number', 'integer', 'boolean'].includes(shape.kind)) return shape;
  return { ...shape, values: allowed } as Shape;
}

/** The shape without the values it was limited to: what a function makes of it may be anything of its kind. */
export function withoutValues(shape: Shape): Shape {
  if (!('values' in shape) || shape.values === undefined) return shape;
  const { values: _values, ...rest } = shape;
  return rest;
}

export const ANY: Shape = { kind: 'any' };
export const STRING: Shape = { kind: 'string' };
export const INTEGER: Shape = { kind: 'integer' };
export const NUMBER: Shape = { kind: 'number' };
export const BOOLEAN: Shape = { kind: 'boolean' };
export const list = (items: Shape): Shape => ({ kind: 'list', items });
export const object = (fields: Record<string, Shape>, open = false): Shape => ({ kind: 'object', fields, open });

/**
 * One suggester per set of fields (an llm step's schema may have thousands), kept while the shape
 * lives: many references to missing fields cost the fields once, not once each.
 */
const suggesters = new WeakMap<Record<string, Shape>, NameSuggester>();
function fieldNames(fields: Record<string, Shape>): NameSuggester {
  let names = suggesters.get(fields);
  if (!names) {
    names = new NameSuggester(Object.keys(fields));
    suggesters.set(fields, names);
  }
  return names;
}

export function describeShape(shape: Shape): string {
  switch (shape.kind) {
    case 'any':
      return 'a value';
    case 'string':
      return 'text';
    case 'number':
    case 'integer':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'nothing';
    case 'list':
      return 'a list';
    case 'object':
      return 'an object';
  }
}

/** The shape of a JSON Schema's values, as far as a path can use it. */
export function shapeFromSchema(schema: unknown, depth = 0): Shape {
  if (typeof schema !== 'object' || schema === null || depth > 16) return ANY;
  const s = schema as Record<string, unknown>;
  switch (s.type) {
    case 'string':
      return withValues(STRING, s.enum);
    case 'integer':
      return withValues(INTEGER, s.enum);
    case 'number':
      return withValues(NUMBER, s.enum);
    case 'boolean':
      return BOOLEAN;
    case 'array':
      return list(shapeFromSchema(s.items, depth + 1));
    case 'object': {
      const properties = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Record<
        string,
        unknown
      >;
      const fields = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, shapeFromSchema(v, depth + 1)]));
      return object(fields, s.additionalProperties !== false || Object.keys(fields).length === 0);
    }
    default:
      return ANY;
  }
}

export type PathCheck = { ok: true; shape: Shape } | { ok: false; message: string };

/**
 * Follows `segments` through `shape`. `label` is the path so far as written (`steps.hero.outputs`),
 * for messages such as "steps.hero.outputs has no field 'imagez'".
 */
export function followPath(shape: Shape, segments: readonly Segment[], root: string): PathCheck {
  return follow(shape, segments, () => root);
}

/** As followPath, the path so far worded only for a message: most paths are followed without one. */
function follow(shape: Shape, segments: readonly Segment[], root: () => string): PathCheck {
  let current = shape;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const label = () => pathText(root(), segments.slice(0, i));
    if (current.kind === 'any') return { ok: true, shape: ANY };
    if (segment.kind === 'wildcard') {
      if (current.kind !== 'list')
        return { ok: false, message: `${label()} is ${describeShape(current)}, not a list, so [*] cannot apply` };
      const rest = follow(current.items, segments.slice(i + 1), () => `${label()}[*]`);
      if (!rest.ok) return rest;
      // [*] maps the rest over the list and flattens one level.
      return { ok: true, shape: list(rest.shape.kind === 'list' ? rest.shape.items : rest.shape) };
    }
    if (segment.kind === 'index') {
      if (current.kind !== 'list')
        return {
          ok: false,
          message: `${label()} is ${describeShape(current)}, not a list, so [${segment.index}] cannot apply`,
        };
      current = current.items;
      continue;
    }
    if (current.kind === 'list') {
      const at = `${label()}[0].${segment.name}`;
      const all = `${label()}[*].${segment.name}`;
      const items = current.items;
      // A list in each item: [*] would flatten them, so one per item needs an index too.
      const inEach =
        items.kind === 'object' && Object.hasOwn(items.fields, segment.name) ? items.fields[segment.name] : undefined;
      return {
        ok: false,
        message:
          inEach?.kind === 'list'
            ? `${label()} is a list; use ${at} for the first item's, ${all}[0] for the first of each item's, or ${all} for all of them in one list`
            : `${label()} is a list; use ${at} for the first item or ${all} for all`,
      };
    }
    if (current.kind !== 'object')
      return { ok: false, message: `${label()} is ${describeShape(current)} and has no field '${segment.name}'` };
    const field = Object.hasOwn(current.fields, segment.name) ? current.fields[segment.name] : undefined;
    if (!field) {
      if (current.open) return { ok: true, shape: ANY };
      const names = fieldNames(current.fields);
      const hint = names.hint(segment.name);
      return {
        ok: false,
        message: `${label()} has no field '${segment.name}'${hint}${names.count() ? `${hint ? ' It' : '; it'} has ${names.list()}` : ''}`,
      };
    }
    current = field;
  }
  return { ok: true, shape: current };
}
