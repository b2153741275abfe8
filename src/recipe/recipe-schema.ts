import type { ErrorObject, ValidateFunction } from 'ajv';
import { ajvLibrary, RECIPE_SCHEMA_OPTIONS } from '../model-schemas/ajv-setup.js';
import type { JsonSchema } from '../model-schemas/bundled.js';
import { precompiledValidator } from '../model-schemas/precompiled.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { PathPart, SourceFile } from './source.js';
import { closestName } from '../expressions/suggest.js';

/** Each recipe schema compiled once, however many recipes it checks. */
const validators = new WeakMap<JsonSchema, ValidateFunction>();

function compiled(schema: JsonSchema): ValidateFunction {
  let validator = validators.get(schema);
  if (!validator) {
    // The package's own schema was compiled when it was built; another (a test's) is compiled here.
    validator =
      precompiledValidator('recipe', JSON.stringify(schema)) ??
      new (ajvLibrary().Ajv)(RECIPE_SCHEMA_OPTIONS).compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

const STEP_KEYS =
  'uses, with, run, needs, for_each, if, retry, timeout, continue_on_error, cache, runs_on, description';
const TOP_KEYS = 'version, name, description, inputs, settings, steps, outputs';

function pathOf(instancePath: string): PathPart[] {
  return instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** `steps.hero.timeout` for a path, as people read it. */
export function label(path: readonly PathPart[]): string {
  return (
    path.reduce<string>(
      (text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part),
      '',
    ) || 'the recipe'
  );
}

const ONE_OF_MESSAGES: Array<[RegExp, string]> = [
  [/^settings\.rpm$/, 'must be auto or a whole number of at least 1'],
  [/^steps\.[^.]+\.run$/, 'must be a command string or a list of strings'],
  [/^steps\.[^.]+\.needs$/, 'must be a step id or a list of step ids'],
  [/^steps\.[^.]+\.for_each$/, 'must be an expression giving a list, or a list'],
  [/^steps\.[^.]+\.if$/, 'must be an expression, or true or false'],
  [/^steps\.[^.]+\.cache$/, 'must be true, false, or a mapping such as { ttl: 7d, key: "${{ inputs.version }}" }'],
  [/^steps\.[^.]+\.cache\.ttl$/, 'must be a duration such as 12h or 7d'],
  [/(timeout|backoff|poll)$/, 'must be a duration such as 90s or 15m'],
];

/** What a value that does not match a schema pattern must be, in words: by the pattern, not by where it is. */
function patternRule(pattern: string): string {
  if (pattern.includes('(ms|s|m|h|d)')) return 'must be a duration such as 12h or 7d';
  if (pattern.includes('(ms|s|m|h)')) return 'must be a duration such as 90s or 15m';
  if (pattern === '^s3://') return 'must be an s3:// address such as s3://bucket/prefix';
  if (pattern.includes('\\*?$'))
    return 'must be an environment variable name (letters, digits and _, not starting with a digit), or a prefix of one ending in * such as AWS_*';
  return `must match the pattern ${pattern}`;
}

function value(data: unknown, path: readonly PathPart[]): unknown {
  let current = data;
  for (const part of path) current = (current as Record<string | number, unknown> | undefined)?.[part];
  return current;
}

const isMapping = (data: unknown): data is Record<string, unknown> =>
  typeof data === 'object' && data !== null && !Array.isArray(data);

/** ` (did you mean 'retry'?); a step has …`, or `; a step has …` when no known key is close. */
function knownKeys(key: string, owner: string, known: string): string {
  const meant = closestName(key, known.split(', '));
  return meant === undefined ? `; ${owner} has ${known}` : ` (did you mean '${meant}'?); ${owner} has ${known}`;
}

/**
 * The keys a mapping of the schema allows, read at the error's schema path (`#/$defs/settings/
 * additionalProperties` → the properties of `$defs.settings`): what an unknown key's error lists.
 */
function allowedKeys(schema: JsonSchema, schemaPath: string): string | undefined {
  const pointer = schemaPath.replace(/^#\//, '').split('/').slice(0, -1);
  let node: unknown = schema;
  for (const part of pointer) node = isMapping(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  const properties = isMapping(node) ? node.properties : undefined;
  return isMapping(properties) && Object.keys(properties).length > 0 ? Object.keys(properties).join(', ') : undefined;
}

function describeError(
  e: ErrorObject,
  data: unknown,
  schema: JsonSchema,
): { path: PathPart[]; at: 'key' | 'value'; message: string } | undefined {
  const path = pathOf(e.instancePath);
  const where = label(path);
  const params = e.params as Record<string, unknown>;
  const isStep = path.length === 2 && path[0] === 'steps';
  switch (e.keyword) {
    case 'oneOf': {
      if (isStep) {
        const step = value(data, path);
        // A step that is not a mapping at all is reported by its type error, which says so.
        if (!isMapping(step)) return undefined;
        return 'uses' in step && 'run' in step
          ? {
              path: [...path, 'run'],
              at: 'key',
              message: `step '${String(path[1])}' has both uses and run; a step has exactly one of them`,
            }
          : { path, at: 'key', message: `step '${String(path[1])}' needs uses (an action) or run (a command)` };
      }
      const message = ONE_OF_MESSAGES.find(([pattern]) => pattern.test(where))?.[1] ?? 'is not valid here';
      return { path, at: 'value', message: `${where} ${message}` };
    }
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const known = path.length === 0 ? TOP_KEYS : isStep ? STEP_KEYS : allowedKeys(schema, e.schemaPath);
      const owner = path.length === 0 ? 'a recipe' : isStep ? 'a step' : where;
      return {
        path: [...path, key],
        at: 'key',
        message: `unknown key '${key}' in ${path.length === 0 ? 'the recipe' : isStep ? `step '${String(path[1])}'` : where}${known ? knownKeys(key, owner, known) : ''}`,
      };
    }
    case 'propertyNames':
      return undefined; // reported by the inner pattern error, which names the key
    case 'pattern':
      if (e.propertyName !== undefined) {
        const kind =
          where === 'steps'
            ? 'step id'
            : where === 'inputs'
              ? 'input name'
              : where === 'outputs'
                ? 'output name'
                : 'name';
        const rule =
          where === 'steps'
            ? 'lowercase letters, digits, _ and -, starting with a letter'
            : 'letters, digits, _ and -, starting with a letter or _';
        return { path: [...path, e.propertyName], at: 'key', message: `${kind} '${e.propertyName}' must be ${rule}` };
      }
      if (where === 'name')
        return {
          path,
          at: 'value',
          message: `name must be lowercase letters, digits and -, starting with a letter or digit (got ${JSON.stringify(value(data, path))})`,
        };
      return { path, at: 'value', message: `${where} ${patternRule(String(params.pattern))}` };
    case 'maxLength':
      if (e.propertyName !== undefined)
        return {
          path: [...path, e.propertyName],
          at: 'key',
          message: `step id '${e.propertyName}' is longer than ${String(params.limit)} characters`,
        };
      return { path, at: 'value', message: `${where} must be at most ${String(params.limit)} characters` };
    case 'required':
      if (path.length === 0)
        return { path: [], at: 'value', message: `the recipe needs ${String(params.missingProperty)}` };
      return { path, at: 'key', message: `${where} needs ${String(params.missingProperty)}` };
    case 'const':
      return {
        path,
        at: 'value',
        message: `${where} must be ${JSON.stringify(params.allowedValue)} (got ${JSON.stringify(value(data, path))})`,
      };
    case 'enum':
      return {
        path,
        at: 'value',
        message: `${where} must be one of ${(params.allowedValues as unknown[]).join(', ')} (got ${JSON.stringify(value(data, path))})`,
      };
    case 'type': {
      const expected = String(params.type);
      const words: Record<string, string> = {
        object: 'a mapping',
        array: 'a list',
        string: 'text',
        integer: 'a whole number',
        number: 'a number',
        boolean: 'true or false',
      };
      const got = value(data, path);
      if (path.length === 0 && (got === null || got === undefined))
        return {
          path,
          at: 'value',
          message: 'the recipe is empty; a recipe starts with version: 1, a name and its steps',
        };
      return {
        path,
        at: 'value',
        message: `${where} must be ${words[expected] ?? expected}, got ${got === null ? 'nothing' : Array.isArray(got) ? 'a list' : typeof got === 'object' ? 'a mapping' : JSON.stringify(got)}`,
      };
    }
    case 'minimum':
    case 'maximum':
      return {
        path,
        at: 'value',
        message: `${where} must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)} (got ${JSON.stringify(value(data, path))})`,
      };
    case 'minProperties':
      return { path, at: 'value', message: `${where} must have at least one ${where === 'steps' ? 'step' : 'entry'}` };
    case 'minItems':
      return { path, at: 'value', message: `${where} must not be empty` };
    default:
      return { path, at: 'value', message: `${where} ${e.message ?? 'is not valid'}` };
  }
}

/** Structural problems of a parsed recipe, all at once; errors inside a failed `oneOf` branch are folded into one. */
export function checkStructure(data: unknown, file: SourceFile, schema: JsonSchema): Diagnostic[] {
  const validate = compiled(schema);
  if (validate(data)) return [];
  const all = validate.errors ?? [];
  const inBranch = (e: ErrorObject) => /\/oneOf\/\d+\//.test(e.schemaPath);
  // A value of the right shape for one branch of a oneOf (a mapping where a mapping is allowed)
  // that fails inside it is told by what fails inside (`cache.ttl`), not by the oneOf as a whole.
  const inside = (e: ErrorObject) =>
    all.filter((inner) => inBranch(inner) && inner.instancePath.startsWith(`${e.instancePath}/`));
  const errors = all.flatMap((e) => {
    if (inBranch(e)) return [];
    if (e.keyword !== 'oneOf') return [e];
    const deeper = inside(e);
    if (deeper.length === 0) return [e];
    // A oneOf inside speaks for its own branches (`ttl`: a duration, or a number of seconds).
    const oneOfs = new Set(deeper.filter((inner) => inner.keyword === 'oneOf').map((inner) => inner.instancePath));
    return deeper.filter((inner) => inner.keyword === 'oneOf' || !oneOfs.has(inner.instancePath));
  });
  const seen = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  for (const e of errors) {
    const described = describeError(e, data, schema);
    if (!described) continue;
    const range = file.locate(described.path, described.at);
    const key = `${range.start}:${described.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    diagnostics.push(error(file, range, described.message));
  }
  return diagnostics;
}
