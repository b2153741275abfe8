import { UsageError } from './errors.js';

/**
 * A numeric flag's parser for commander: the value, or a usage error that names the flag, the
 * range and what was given. Whole numbers are written as digits only (no `1e2`, no `+3`).
 */
export function numberFlag(flag: string, options: { integer?: boolean; min?: number; max?: number } = {}) {
  return (value: string): number => {
    const parsed = Number(value);
    const written = options.integer ? /^-?\d+$/.test(value.trim()) : value.trim() !== '';
    const ok =
      written &&
      Number.isFinite(parsed) &&
      (options.min === undefined || parsed >= options.min) &&
      (options.max === undefined || parsed <= options.max);
    if (!ok) {
      const kind = options.integer ? 'a whole number' : 'a number';
      const range =
        options.min !== undefined && options.max !== undefined
          ? ` from ${options.min} to ${options.max}`
          : options.min !== undefined
            ? ` of at least ${options.min}`
            : '';
      throw new UsageError(`${flag} takes ${kind}${range}, got ${JSON.stringify(value)}`);
    }
    return parsed;
  };
}

/** `--set name=value`, repeatable; `--set name` alone is a usage error, not an empty value. */
export function collectSet(value: string, previous: string[] = []): string[] {
  const equals = value.indexOf('=');
  if (equals < 0)
    throw new UsageError(
      `--set takes name=value, got ${JSON.stringify(value)}: write --set ${value}=VALUE (--set ${value}= for empty text)`,
    );
  if (equals === 0)
    throw new UsageError(
      `--set takes name=value, got ${JSON.stringify(value)}: the input's name is missing before '='`,
    );
  return [...previous, value];
}
