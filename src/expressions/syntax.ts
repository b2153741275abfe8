/** The syntax tree of an expression, its limits and its syntax errors. */

export type Segment = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' };

export type Expr =
  | { kind: 'path'; root: string; segments: Segment[]; start: number; end: number }
  | { kind: 'call'; name: FunctionName; args: Expr[]; start: number; end: number }
  | { kind: 'literal'; value: string | number | boolean | null; start: number; end: number };

export const ROOTS = ['inputs', 'steps', 'item', 'index', 'run', 'env'] as const;
export const FUNCTIONS = { join: [1, 2], json: [1, 1], length: [1, 1], default: [2, 2], slice: [2, 3] } as const;
export type FunctionName = keyof typeof FUNCTIONS;

/** Longest expression text, deepest nesting, most expressions in one string. */
export const LIMITS = { exprLength: 2000, depth: 32, perString: 200 } as const;

export class ExpressionSyntaxError extends Error {
  constructor(
    message: string,
    /** Offset within the expression text. */
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Prints a path back as written, for messages. */
export function pathText(root: string, segments: readonly Segment[]): string {
  return segments.reduce(
    (text, s) =>
      text + (s.kind === 'wildcard' ? '[*]' : s.kind === 'index' ? `[${s.index}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s.name) ? `.${s.name}` : `['${s.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`),
    root,
  );
}
