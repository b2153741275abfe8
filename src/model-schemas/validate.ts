import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { modelSchemaAjv } from './ajv-setup.js';
import type { JsonSchema } from './bundled.js';
import { precompiledValidator } from './precompiled.js';
import { closestName } from '../expressions/suggest.js';

/** One problem with one field of a model input. */
export interface FieldProblem {
  /** Where in the input: `['image', 0]` for `image[0]`; empty for the input as a whole. */
  path: Array<string | number>;
  /** The field as people write it: `image[0]`. */
  field: string;
  message: string;
  /** Whether the problem is the key (an input the model does not have) or its value. */
  at: 'key' | 'value';
  /** For a key the model does not have: the one it has that is closest, when close enough to be a slip. */
  meant?: string;
}

/** `; did you mean 'aspect_ratio'?` at the end of a problem's message, when it has a suggestion. */
export const meantText = (problem: FieldProblem): string =>
  problem.meant === undefined ? '' : `; did you mean '${problem.meant}'?`;

/** Made on first use: the shipped schemas' validators were compiled when the package was built. */
let ajv: Ajv | undefined;
/** Compiled validators by schema text: the same model's schema read twice compiles once. */
const compiled = new Map<string, ValidateFunction>();
/** The same schema object again skips even the serialising. */
const byObject = new WeakMap<JsonSchema, ValidateFunction>();

export function fieldLabel(path: Array<string | number>): string {
  return path.reduce<string>(
    (label, part) => (typeof part === 'number' ? `${label}[${part}]` : label ? `${label}.${part}` : part),
    '',
  );
}

function pathOf(instancePath: string): Array<string | number> {
  // Most paths are empty or one plain field: no splitting and escaping for those.
  if (instancePath === '') return [];
  const second = instancePath.indexOf('/', 1);
  if (second < 0 && !instancePath.includes('~')) {
    const field = instancePath.slice(1);
    return [/^\d+$/.test(field) ? Number(field) : field];
  }
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

const quote = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 50 ? `${text.slice(0, 47)}...` : text;
};

/** Where an error is: its instance path, and for a missing or unknown key that key. */
function problemPath(error: ErrorObject): Array<string | number> {
  const base = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return [...base, String(params.missingProperty)];
  if (error.keyword === 'additionalProperties') return [...base, String(params.additionalProperty)];
  return base;
}

/** The names of the fields the schema has at `path` (an object's properties, through lists' items). */
function fieldsAt(schema: JsonSchema, path: Array<string | number>): string[] {
  let at: Record<string, unknown> | undefined = schema;
  for (const part of path) {
    const next: unknown =
      typeof part === 'number' ? at?.items : (at?.properties as Record<string, unknown> | undefined)?.[part];
    at = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : undefined;
  }
  const properties = at?.properties;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}

function problemOf(error: ErrorObject, schema: JsonSchema): FieldProblem {
  const base = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const value = error.data;
  const say = (path: Array<string | number>, message: string, at: 'key' | 'value' = 'value'): FieldProblem => ({
    path,
    field: fieldLabel(path) || 'input',
    message,
    at,
  });
  switch (error.keyword) {
    case 'required':
      return say([...base, String(params.missingProperty)], 'is required');
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const meant = closestName(name, fieldsAt(schema, base));
      return { ...say([...base, name], 'is not an input of this model', 'key'), ...(meant ? { meant } : {}) };
    }
    case 'type':
      return say(
        base,
        `must be ${params.type === 'integer' ? 'an integer' : params.type === 'array' ? 'a list' : `a ${String(params.type)}`}, got ${quote(value)}`,
      );
    case 'minimum':
    case 'maximum':
      return say(
        base,
        `must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}, got ${quote(value)}`,
      );
    case 'minLength':
    case 'maxLength':
      return say(
        base,
        `must be ${error.keyword === 'minLength' ? 'at least' : 'at most'} ${String(params.limit)} characters, got ${[...String(value)].length}`,
      );
    case 'minItems':
    case 'maxItems':
      return say(
        base,
        `must have ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${String(params.limit)} items, got ${Array.isArray(value) ? value.length : 0}`,
      );
    case 'enum':
      return say(
        base,
        `must be one of ${(params.allowedValues as unknown[]).map((v) => String(v)).join(', ')}; got ${quote(value)}`,
      );
    case 'pattern': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return say(
        base,
        `${description ? `must be ${description.replace(/\.$/, '')}` : `must match ${String(params.pattern)}`}; got ${quote(value)}`,
      );
    }
    case 'format':
      return say(
        base,
        `must be ${params.format === 'uri' ? 'a URL or a local file' : `a ${String(params.format)}`}, got ${quote(value)}`,
      );
    default:
      return say(base, error.message ?? 'is not valid');
  }
}

/**
 * Checks `input` against a model's request schema: one problem per field at fault, in schema order.
 * `ignore` leaves out the problems at paths it names before their messages are made (the analyzer
 * ignores values known only at run time, which fail every check of every step).
 */
export function validateModelInput(
  schema: JsonSchema,
  input: unknown,
  ignore?: (path: Array<string | number>) => boolean,
): FieldProblem[] {
  let validate = byObject.get(schema);
  const key = validate ? '' : JSON.stringify(schema);
  validate ??= compiled.get(key);
  validate ??= precompiledValidator('model', key);
  if (!validate) {
    // The $id is dropped: a live schema and the bundled copy may share it with different content.
    const { $id: _id, ...anonymous } = schema;
    ajv ??= modelSchemaAjv();
    validate = ajv.compile(anonymous);
    compiled.set(key, validate);
  }
  byObject.set(schema, validate);
  if (validate(input)) return [];
  const errors = validate.errors ?? [];
  return (ignore ? errors.filter((error) => !ignore(problemPath(error))) : errors).map((error) =>
    problemOf(error, schema),
  );
}

/** A media input written as a path rather than a URL (`./assets/logo.png`): it is uploaded first. */
export const isLocalPath = (value: string) => !/^[a-z][a-z0-9+.-]*:/i.test(value);

/** The input fields that take media URLs (and so local files, uploaded first), with their media kind. */
export function mediaFields(schema: JsonSchema): Array<{ field: string; media: string; list: boolean }> {
  // Each step of a model asks: its schema is read once.
  let fields = mediaFieldsBySchema.get(schema);
  if (!fields) {
    fields = readMediaFields(schema);
    mediaFieldsBySchema.set(schema, fields);
  }
  return fields;
}

const mediaFieldsBySchema = new WeakMap<JsonSchema, Array<{ field: string; media: string; list: boolean }>>();

function readMediaFields(schema: JsonSchema): Array<{ field: string; media: string; list: boolean }> {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const fields = [];
  for (const [field, property] of Object.entries(properties)) {
    const items = property.items as Record<string, unknown> | undefined;
    const target = property.type === 'array' && items ? items : property;
    if (target.format === 'uri' || typeof target['x-media'] === 'string') {
      fields.push({
        field,
        media: typeof target['x-media'] === 'string' ? target['x-media'] : 'image',
        list: property.type === 'array',
      });
    }
  }
  return fields;
}
