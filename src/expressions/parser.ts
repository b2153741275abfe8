import { tokenize, type Token } from './lexer.js';
import { didYouMean } from './suggest.js';
import {
  ExpressionSyntaxError,
  FUNCTIONS,
  LIMITS,
  ROOTS,
  type BinaryOperator,
  type Expr,
  type FunctionName,
  type Segment,
} from './syntax.js';

/** Parses the text between `${{` and `}}`. */
export function parseExpression(text: string): Expr {
  if (text.length > LIMITS.exprLength)
    throw new ExpressionSyntaxError(`expression longer than ${LIMITS.exprLength} characters`, 0);
  return new Parser(text, tokenize(text)).parse();
}

/** Binary operators from the loosest to the tightest, as GitHub Actions ranks them. */
const LEVELS: ReadonlyArray<readonly BinaryOperator[]> = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>=']];

/** Function names as written in any case (`toJson`, `fromjson`), as GitHub Actions accepts them. */
const FUNCTION_BY_LOWER = new Map(Object.keys(FUNCTIONS).map((name) => [name.toLowerCase(), name as FunctionName]));

/**
 * A recursive-descent parser over one expression's tokens: `||` over `&&` over `==`/`!=` over the
 * ordering comparisons over `!` over a literal, a call, a path or a parenthesised expression.
 */
class Parser {
  private position = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  parse(): Expr {
    const result = this.expression(0);
    const rest = this.peek();
    if (rest) throw new ExpressionSyntaxError(`unexpected '${rest.text}' after the expression`, rest.start);
    return result;
  }

  private peek(): Token | undefined {
    return this.tokens[this.position];
  }

  private next(): Token | undefined {
    return this.tokens[this.position++];
  }

  private expect(punct: string): Token {
    const token = this.next();
    if (token?.kind !== 'punct' || token.text !== punct)
      throw new ExpressionSyntaxError(
        `expected '${punct}'${token ? ` but found '${token.text}'` : ' at the end'}`,
        token?.start ?? this.text.length,
      );
    return token;
  }

  private expression(depth: number): Expr {
    if (depth > LIMITS.depth)
      throw new ExpressionSyntaxError(`expression nested deeper than ${LIMITS.depth}`, this.peek()?.start ?? 0);
    return this.binary(0, depth);
  }

  /** One precedence level: operands of the next level joined left to right by this level's operators. */
  private binary(level: number, depth: number): Expr {
    const operators = LEVELS[level];
    if (!operators) return this.unary(depth);
    let left = this.binary(level + 1, depth);
    for (;;) {
      const token = this.peek();
      if (token?.kind !== 'operator' || !(operators as readonly string[]).includes(token.text)) return left;
      this.next();
      if (!this.peek()) throw new ExpressionSyntaxError(`'${token.text}' needs a value on its right`, token.end);
      const right = this.binary(level + 1, depth);
      left = { kind: 'binary', op: token.text as BinaryOperator, left, right, start: left.start, end: right.end };
    }
  }

  private unary(depth: number): Expr {
    const token = this.peek();
    if (token?.kind === 'operator' && token.text === '!') {
      this.next();
      if (depth + 1 > LIMITS.depth)
        throw new ExpressionSyntaxError(`expression nested deeper than ${LIMITS.depth}`, token.start);
      const operand = this.unary(depth + 1);
      return { kind: 'not', operand, start: token.start, end: operand.end };
    }
    return this.primary(depth);
  }

  private primary(depth: number): Expr {
    const token = this.next();
    if (!token) throw new ExpressionSyntaxError('empty expression', this.text.length);
    if (token.kind === 'string' || token.kind === 'number')
      return { kind: 'literal', value: token.value!, start: token.start, end: token.end };
    if (token.kind === 'punct' && token.text === '(') {
      const inner = this.expression(depth + 1);
      const close = this.expect(')');
      return this.access({ ...inner, start: token.start, end: close.end });
    }
    if (token.kind !== 'ident') throw new ExpressionSyntaxError(`unexpected '${token.text}'`, token.start);
    if (token.text === 'true' || token.text === 'false' || token.text === 'null') {
      return {
        kind: 'literal',
        value: token.text === 'null' ? null : token.text === 'true',
        start: token.start,
        end: token.end,
      };
    }
    if (this.peek()?.text === '(') return this.access(this.call(token, depth));
    if (!(ROOTS as readonly string[]).includes(token.text)) {
      const hint = didYouMean(token.text, ROOTS);
      const starts = `${hint ? ' An' : '; an'} expression starts with ${ROOTS.join(', ')}, a function or a literal`;
      throw new ExpressionSyntaxError(`unknown name '${token.text}'${hint}${starts}`, token.start);
    }
    const { segments, end } = this.segments(token.end);
    return { kind: 'path', root: token.text, segments, start: token.start, end };
  }

  /** `name(arg, …)`, its name and number of arguments checked; `name` is already read. */
  private call(token: Token, depth: number): Expr {
    const name = FUNCTION_BY_LOWER.get(token.text.toLowerCase());
    if (!name) {
      const known = Object.keys(FUNCTIONS);
      const hint = didYouMean(token.text, known);
      throw new ExpressionSyntaxError(
        `unknown function '${token.text}'${hint}${hint ? ' The' : '; the'} functions are ${known.join(', ')}`,
        token.start,
      );
    }
    this.next();
    const args: Expr[] = [];
    if (this.peek()?.text !== ')') {
      for (;;) {
        args.push(this.expression(depth + 1));
        if (this.peek()?.text === ',') this.next();
        else break;
      }
    }
    const close = this.expect(')');
    const [min, max] = FUNCTIONS[name];
    if (args.length < min || args.length > max) {
      throw new ExpressionSyntaxError(
        `${name}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}`,
        token.start,
      );
    }
    return { kind: 'call', name, args, start: token.start, end: close.end };
  }

  /** A path written after a call or parentheses, if any. */
  private access(target: Expr): Expr {
    const { segments, end } = this.segments(target.end);
    return segments.length === 0 ? target : { kind: 'access', target, segments, start: target.start, end };
  }

  /** `.field[0]['key'][*]…` after a root. */
  private segments(start: number): { segments: Segment[]; end: number } {
    const segments: Segment[] = [];
    let end = start;
    for (;;) {
      const following = this.peek();
      if (following?.text === '.') {
        this.next();
        const name = this.next();
        if (!name || (name.kind !== 'ident' && name.kind !== 'number'))
          throw new ExpressionSyntaxError(`expected a name after '.'`, name?.start ?? following.end);
        if (name.kind === 'number' && !/^\d+$/.test(name.text))
          throw new ExpressionSyntaxError(`expected a name after '.'`, name.start);
        segments.push({ kind: 'field', name: name.text });
        end = name.end;
      } else if (following?.text === '[') {
        this.next();
        segments.push(this.bracketed(following));
        end = this.expect(']').end;
      } else break;
      if (segments.length > LIMITS.depth * 4) throw new ExpressionSyntaxError('path too long', following.start);
    }
    return { segments, end };
  }

  /** What is inside `[ ]`: `*`, an index or a quoted key. */
  private bracketed(open: Token): Segment {
    const inside = this.next();
    if (inside?.kind === 'punct' && inside.text === '*') return { kind: 'wildcard' };
    if (inside?.kind === 'number' && Number.isInteger(inside.value) && (inside.value as number) >= 0)
      return { kind: 'index', index: inside.value as number };
    if (inside?.kind === 'string') return { kind: 'field', name: inside.value as string };
    throw new ExpressionSyntaxError(`expected an index, a quoted key or * inside [ ]`, inside?.start ?? open.end);
  }
}
