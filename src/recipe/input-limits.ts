import { createRequire } from 'node:module';

// The shapes of source.ts's PathPart and SourceRange, written out: source.ts imports this module.
type PathPart = string | number;
type SourceRange = { start: number; end: number };

/** `steps.a.with.prompt`, `[0].b`: as recipe-schema.ts's label, which imports what imports this module. */
function label(path: readonly PathPart[]): string {
  return (
    path.reduce<string>(
      (text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part),
      '',
    ) || 'the recipe'
  );
}

/**
 * What a recipe, a batch file and a `--set` value may hold. Each limit is far above any real recipe;
 * each keeps the analysis linear and every recursion over the recipe shallow. Input past one is
 * refused with a located error before anything recurses into it.
 */
export const RECIPE_LIMITS = {
  /** Bytes of recipe text: 24 MB, twice the 100,000-step recipe of the validate-100k benchmark (12 MB). */
  documentBytes: 24 * 1024 * 1024,
  /** Lists and mappings inside one another, the recipe's own mapping counting as one: 64. A real recipe nests under 10. */
  depth: 64,
  /** Steps in one recipe: 200,000, twice the largest recipe the project generates (bench/scenarios/validate-100k.mjs). */
  steps: 200_000,
  /** Entries of any one list or mapping (a literal `for_each`, `needs`, `with`, a list value): 100,000. */
  items: 100_000,
  /** Characters of any one text, value or key: 1,000,000 (1 MB of ASCII), beyond any model's prompt. */
  textChars: 1_000_000,
  /** Rows of one batch file: 1,000,000 runs, a million-item batch. */
  batchRows: 1_000_000,
} as const;

const count = (n: number) => n.toLocaleString('en-US');

/** A limit passed, at a path inside the value checked. */
export interface LimitProblem {
  limit: keyof typeof RECIPE_LIMITS;
  path: PathPart[];
  /** Whether the problem is with the key at `path` (a key too long), not its value. */
  atKey: boolean;
  /** The list or mapping that passed the limit (none for a text). */
  node?: unknown;
  /** The measure that passed the limit: characters, entries or steps (none for depth). */
  size?: number;
  /** A sentence about the recipe: the path, what passed and the limit. */
  message: string;
}

/** `10 MB`, `12.5 MB`. */
const megabytes = (bytes: number) => `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;

/** The recipe text's size against its limit: checked first, before any parser reads it. */
export function documentSizeProblem(text: string): string | undefined {
  // Characters are never more than bytes: the exact count only when it could matter.
  if (text.length * 3 <= RECIPE_LIMITS.documentBytes) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > RECIPE_LIMITS.documentBytes
    ? `the recipe is ${megabytes(bytes)}; a recipe may be at most ${megabytes(RECIPE_LIMITS.documentBytes)}`
    : undefined;
}

const tooDeep = (what: string) =>
  `${what} nested more than ${RECIPE_LIMITS.depth} deep; lists and mappings may nest at most ${RECIPE_LIMITS.depth} deep`;

/**
 * The first list or mapping nested past the depth limit in the text, found on `yaml`'s concrete
 * syntax tree, whose parser keeps a stack of its own and walked here with one: so any depth is
 * measured without recursion. The parsers that build values recurse, and run only after this.
 */
export function textDepthProblem(text: string): { message: string; range: SourceRange } | undefined {
  type Token = { type: string; offset: number; items?: unknown[]; value?: unknown };
  const stack: Array<{ token: unknown; depth: number }> = [];
  // Loaded here, on use: a recipe that js-yaml reads without trouble never needs `yaml` (source.ts says why).
  const { Parser } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  for (const token of new Parser().parse(text)) stack.push({ token, depth: 0 });
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (typeof token !== 'object' || token === null) continue;
    const node = token as Token;
    const collection = node.type === 'block-map' || node.type === 'block-seq' || node.type === 'flow-collection';
    const inner = collection ? depth + 1 : depth;
    if (inner > RECIPE_LIMITS.depth)
      return { message: tooDeep('this list or mapping is'), range: { start: node.offset, end: node.offset + 1 } };
    if (node.type === 'document') stack.push({ token: node.value, depth });
    for (const item of node.items ?? []) {
      const { key, value } = item as { key?: unknown; value?: unknown };
      stack.push({ token: key, depth: inner }, { token: value, depth: inner });
    }
  }
  return undefined;
}

/**
 * The limit a parsed value passes, with its path: depth first (anything else reading the value may
 * recurse), then the first of: entries of a list or mapping, length of a text (keys too), and with
 * `steps` the number of steps. Iterative, so that it is safe on a value of any depth (aliases can
 * nest deeper than the text does), and linear in the value's size.
 */
export function valueLimitProblem(value: unknown, options: { steps?: boolean } = {}): LimitProblem | undefined {
  let first: LimitProblem | undefined;
  const note = (problem: LimitProblem) => {
    first ??= problem;
  };
  // Each entry knows its parent and key, not its whole path: a path is built only for a problem,
  // so that a recipe of 100,000 steps does not cost an array per value.
  type Entry = { value: unknown; parent: Entry | undefined; key: PathPart; depth: number };
  const pathTo = (entry: Entry): PathPart[] => {
    const path: PathPart[] = [];
    for (let at: Entry | undefined = entry; at?.parent; at = at.parent) path.push(at.key);
    return path.reverse();
  };
  const stack: Entry[] = [{ value, parent: undefined, key: '', depth: 0 }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const current = entry.value;
    if (typeof current === 'string') {
      if (current.length > RECIPE_LIMITS.textChars) {
        const path = pathTo(entry);
        note({ limit: 'textChars', path, atKey: false, size: current.length, message: tooLong(path, current) });
      }
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (entry.depth + 1 > RECIPE_LIMITS.depth)
      return {
        limit: 'depth',
        path: pathTo(entry),
        atKey: false,
        node: current,
        message: tooDeep('this list or mapping is'),
      };
    const depth = entry.depth + 1;
    if (Array.isArray(current)) {
      if (current.length > RECIPE_LIMITS.items) {
        const path = pathTo(entry);
        note({
          limit: 'items',
          path,
          atKey: false,
          node: current,
          size: current.length,
          message: tooMany(path, current.length),
        });
      }
      for (let i = current.length - 1; i >= 0; i--)
        if (mayPass(current[i])) stack.push({ value: current[i], parent: entry, key: i, depth });
      continue;
    }
    const keys = Object.keys(current);
    if (options.steps && entry.depth === 1 && entry.key === 'steps') {
      if (keys.length > RECIPE_LIMITS.steps)
        note({
          limit: 'steps',
          path: pathTo(entry),
          atKey: true,
          node: current,
          size: keys.length,
          message: `the recipe has ${count(keys.length)} steps; a recipe may have at most ${count(RECIPE_LIMITS.steps)}`,
        });
    } else if (keys.length > RECIPE_LIMITS.items) {
      const path = pathTo(entry);
      note({
        limit: 'items',
        path,
        atKey: false,
        node: current,
        size: keys.length,
        message: tooMany(path, keys.length),
      });
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (key.length > RECIPE_LIMITS.textChars) {
        const path = [...pathTo(entry), key];
        note({
          limit: 'textChars',
          path,
          atKey: true,
          size: key.length,
          message: `a key of ${count(key.length)} characters in ${label(pathTo(entry))}; a key may be at most ${count(RECIPE_LIMITS.textChars)}`,
        });
      }
      const child = (current as Record<string, unknown>)[key];
      if (mayPass(child)) stack.push({ value: child, parent: entry, key, depth });
    }
  }
  return first;
}

/**
 * Whether a value can pass a limit: a list, a mapping or a text too long. Only those are walked: a
 * scalar within the limits would be taken off the stack to no effect, and most values are scalars.
 */
const mayPass = (value: unknown) =>
  typeof value === 'string' ? value.length > RECIPE_LIMITS.textChars : typeof value === 'object' && value !== null;

const tooLong = (path: PathPart[], text: string) =>
  `${label(path)} is ${count(text.length)} characters long; a text may be at most ${count(RECIPE_LIMITS.textChars)}`;

const tooMany = (path: PathPart[], entries: number) =>
  `${label(path)} has ${count(entries)} entries; a list or mapping may have at most ${count(RECIPE_LIMITS.items)}`;

/**
 * The limit a value given outside the recipe (a batch cell, a `--set` value) passes, as the rest of
 * a sentence that starts with the input's name; none when within them all.
 */
export function givenValueProblem(value: unknown): string | undefined {
  const problem = valueLimitProblem(value);
  if (!problem) return undefined;
  const at = problem.path.length > 0 ? ` at ${label(problem.path)}` : '';
  switch (problem.limit) {
    case 'depth':
      return `nests lists and mappings more than ${RECIPE_LIMITS.depth} deep; a value may nest at most ${RECIPE_LIMITS.depth} deep`;
    case 'textChars':
      return `holds a text of ${count(problem.size ?? 0)} characters${at}; a text may be at most ${count(RECIPE_LIMITS.textChars)}`;
    default:
      return `holds a list or mapping of ${count(problem.size ?? 0)} entries${at}; at most ${count(RECIPE_LIMITS.items)} are allowed`;
  }
}
