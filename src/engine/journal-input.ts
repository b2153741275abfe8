/**
 * What an item was asked, as the journal keeps it for the report: the rendered input with long
 * strings cut, so that a 1 MB prompt costs the journal 2 KB. Not an object (a `run:` command's
 * argv, say): nothing.
 */
export function inputForJournal(input: unknown): Record<string, unknown> | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  return cut(input) as Record<string, unknown>;
}

const LONGEST_STRING = 2000;

function cut(value: unknown): unknown {
  if (typeof value === 'string') return value.length > LONGEST_STRING ? `${value.slice(0, LONGEST_STRING)}…` : value;
  if (Array.isArray(value)) return value.map(cut);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]));
  return value;
}
