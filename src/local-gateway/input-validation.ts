import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { invalid } from './errors.js';

/**
 * Checks request bodies against JSON Schemas (the models' bundled schemas, and the gateway's own
 * for tool requests) and words each problem the way a 400 should: the field, the bound it broke
 * and the value it got.
 */
export class BodyValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false, useDefaults: false, verbose: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    addFormats.default(this.ajv, ['uri']);
  }

  add(name: string, schema: Record<string, unknown>): this {
    this.compiled.set(name, this.ajv.compile(schema));
    return this;
  }

  /** Throws a 400 naming every problem of `body` against the schema called `name`. */
  check(name: string, body: unknown): void {
    const problems = this.problems(name, body);
    if (problems.length > 0) throw invalid(problems.join('; '));
  }

  /** Problems with `body` against the schema called `name`, one sentence each; empty when valid. */
  problems(name: string, body: unknown): string[] {
    const validate = this.compiled.get(name);
    if (!validate) throw new Error(`Internal error: no schema compiled for ${name}`);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => describe(error, body));
  }
}

function fieldName(instancePath: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function valueAt(body: unknown, instancePath: string): unknown {
  let value = body;
  for (const part of instancePath.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describe(error: ErrorObject, body: unknown): string {
  const field = fieldName(error.instancePath) || 'the body';
  const value = valueAt(body, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${field === 'the body' ? '' : `${field}.`}${String(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${field === 'the body' ? '' : `${field}.`}${String(params.additionalProperty)} is not a field of this model`;
    case 'type':
      return `${field} must be of type ${String(params.type)} (got ${shown(value)})`;
    case 'minimum':
      return `${field} must be at least ${String(params.limit)} (got ${shown(value)})`;
    case 'maximum':
      return `${field} must be at most ${String(params.limit)} (got ${shown(value)})`;
    case 'minLength':
      return `${field} must be at least ${String(params.limit)} characters long (got ${[...String(value)].length})`;
    case 'maxLength':
      return `${field} must be at most ${String(params.limit)} characters long (got ${[...String(value)].length})`;
    case 'minItems':
      return `${field} must have at least ${String(params.limit)} items (got ${Array.isArray(value) ? value.length : 0})`;
    case 'maxItems':
      return `${field} must have at most ${String(params.limit)} items (got ${Array.isArray(value) ? value.length : 0})`;
    case 'enum':
      return `${field} must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')} (got ${shown(value)})`;
    case 'pattern':
      return `${field} must be ${String((error.parentSchema as { description?: string } | undefined)?.description ?? `of the form ${String(params.pattern)}`)} (got ${shown(value)})`;
    case 'format':
      return `${field} must be a ${params.format === 'uri' ? 'URL' : String(params.format)} (got ${shown(value)})`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}
