/** The functions an expression may call. Only hashFiles() and the status functions look beyond their arguments. */
import { isTruthy, looselyEqual } from './operators.js';
import type { FunctionName } from './syntax.js';

/** A value an expression cannot work with at run time (a function given the wrong kind of value). */
export class ExpressionError extends Error {}

/** What the functions may ask of the world around the expression. */
export interface FunctionHost {
  /** The state of the steps this one comes after; only a step's `if` has it. */
  status?: { failure: boolean; cancelled: boolean };
  /** SHA-256 over the files the patterns match, relative to the recipe; empty text when none match. */
  hashFiles?: (patterns: string[]) => string;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Text of a value inside a longer string: strings as they are, lists one item a line, objects as JSON. */
export function toText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(toText).join('\n');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `${typeof value === 'string' ? 'text' : `a ${typeof value}`}`;
}

export function callFunction(name: FunctionName, args: unknown[], host: FunctionHost): unknown {
  const [first, second, third] = args;
  switch (name) {
    case 'join': {
      if (!Array.isArray(first)) throw new ExpressionError(`join() needs a list, got ${describe(first)}`);
      return first.map(toText).join(second === undefined ? ',' : toText(second));
    }
    case 'json':
      return JSON.stringify(first ?? null);
    case 'length':
      if (Array.isArray(first) || typeof first === 'string') return first.length;
      if (isPlainObject(first)) return Object.keys(first).length;
      if (first === null) return 0;
      throw new ExpressionError(`length() needs a list, text or object, got ${describe(first)}`);
    case 'default':
      return first === null || first === undefined || first === '' ? second : first;
    case 'slice': {
      if (!Array.isArray(first) && typeof first !== 'string')
        throw new ExpressionError(`slice() needs a list or text, got ${describe(first)}`);
      if (typeof second !== 'number' || (third !== undefined && typeof third !== 'number'))
        throw new ExpressionError('slice() takes whole-number start and end');
      return first.slice(second, third as number | undefined);
    }
    default:
      return actionsFunction(name, args, host);
  }
}

/** The functions GitHub Actions has, with its meaning: text compared without regard to case. */
function actionsFunction(name: FunctionName, args: unknown[], host: FunctionHost): unknown {
  const [first, second] = args;
  switch (name) {
    case 'contains':
      if (Array.isArray(first)) return first.some((element) => looselyEqual(element, second));
      return toText(first).toUpperCase().includes(toText(second).toUpperCase());
    case 'startsWith':
      return toText(first).toUpperCase().startsWith(toText(second).toUpperCase());
    case 'endsWith':
      return toText(first).toUpperCase().endsWith(toText(second).toUpperCase());
    case 'format':
      return format(toText(first), args.slice(1));
    case 'toJSON':
      return JSON.stringify(first ?? null, null, 2);
    case 'fromJSON':
      return fromJson(first);
    case 'hashFiles':
      if (!host.hashFiles) throw new ExpressionError('hashFiles() is not available here');
      return host.hashFiles(args.map(toText));
    default:
      return statusFunction(name, host);
  }
}

function statusFunction(name: FunctionName, host: FunctionHost): boolean {
  const status = host.status;
  if (!status) throw new ExpressionError(`${name}() can be used only in a step's if`);
  switch (name) {
    case 'success':
      return !status.failure && !status.cancelled;
    case 'failure':
      return status.failure;
    case 'cancelled':
      return status.cancelled;
    case 'always':
      return true;
    default:
      throw new Error(`Internal error: no function ${name}`);
  }
}

/** What format() would refuse of a pattern known before the run, given `count` values: the run's own message. */
export function formatPatternProblem(pattern: string, count: number): string | undefined {
  try {
    format(pattern, new Array(count).fill(''));
    return undefined;
  } catch (cause) {
    if (cause instanceof ExpressionError) return cause.message;
    throw cause;
  }
}

/** `format('{0} and {1}', a, b)`: `{N}` is the Nth value as text, `{{` and `}}` are braces. */
function format(pattern: string, values: unknown[]): string {
  return pattern.replace(/\{\{|\}\}|\{(\d+)\}|[{}]/g, (match, index: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    if (index === undefined)
      throw new ExpressionError(`format() found a lone '${match}' in '${pattern}'; write {{ or }} for a brace`);
    const n = Number(index);
    if (n >= values.length)
      throw new ExpressionError(`format() has no value for {${n}}: it got ${values.length} after the pattern`);
    return toText(values[n]);
  });
}

function fromJson(value: unknown): unknown {
  if (typeof value !== 'string') throw new ExpressionError(`fromJSON() needs text, got ${describe(value)}`);
  try {
    return JSON.parse(value);
  } catch (cause) {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    throw new ExpressionError(
      `fromJSON() could not read ${JSON.stringify(shown)} as JSON: ${(cause as Error).message}`,
    );
  }
}

export { isTruthy };
