/** The syntax tree of an expression, its limits and its syntax errors. */

export type Segment = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' };

export type BinaryOperator = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

export type Expr =
  | { kind: 'path'; root: string; segments: Segment[]; start: number; end: number }
  | { kind: 'call'; name: FunctionName; args: Expr[]; start: number; end: number }
  | { kind: 'literal'; value: string | number | boolean | null; start: number; end: number }
  | { kind: 'binary'; op: BinaryOperator; left: Expr; right: Expr; start: number; end: number }
  | { kind: 'not'; operand: Expr; start: number; end: number }
  /** A path after a call or a parenthesised expression: `fromJSON(x).name`, `(a || b)[0]`. */
  | { kind: 'access'; target: Expr; segments: Segment[]; start: number; end: number };

export const ROOTS = ['inputs', 'steps', 'item', 'index', 'run', 'env'] as const;

/** Each function's least and most arguments. Names are matched without regard to case, as in GitHub Actions. */
export const FUNCTIONS = {
  join: [1, 2],
  json: [1, 1],
  length: [1, 1],
  default: [2, 2],
  slice: [2, 3],
  contains: [2, 2],
  startsWith: [2, 2],
  endsWith: [2, 2],
  format: [1, 21],
  toJSON: [1, 1],
  fromJSON: [1, 1],
  hashFiles: [1, 20],
  success: [0, 0],
  failure: [0, 0],
  always: [0, 0],
  cancelled: [0, 0],
} as const;
export type FunctionName = keyof typeof FUNCTIONS;

/** Functions that read the state of the steps before this one: allowed only in a step's `if`. */
export const STATUS_FUNCTIONS: ReadonlySet<FunctionName> = new Set(['success', 'failure', 'always', 'cancelled']);

/** Whether the expression calls a status function anywhere: then a step's `if` is not `success() && …`. */
export function callsStatus(expr: Expr): boolean {
  switch (expr.kind) {
    case 'call':
      return STATUS_FUNCTIONS.has(expr.name) || expr.args.some(callsStatus);
    case 'binary':
      return callsStatus(expr.left) || callsStatus(expr.right);
    case 'not':
      return callsStatus(expr.operand);
    case 'access':
      return callsStatus(expr.target);
    default:
      return false;
  }
}

/** The operators, tightest first, as in GitHub Actions. */
export const OPERATORS = ['!', '<', '<=', '>', '>=', '==', '!=', '&&', '||'] as const;

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
      text +
      (s.kind === 'wildcard'
        ? '[*]'
        : s.kind === 'index'
          ? `[${s.index}]`
          : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s.name)
            ? `.${s.name}`
            : `['${s.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`),
    root,
  );
}
