import { tokenize, type Token } from './lexer.js';
import { ExpressionSyntaxError, FUNCTIONS, LIMITS, ROOTS, type Expr, type FunctionName, type Segment } from './syntax.js';

/** Parses the text between `${{` and `}}`. */
export function parseExpression(text: string): Expr {
  if (text.length > LIMITS.exprLength) throw new ExpressionSyntaxError(`expression longer than ${LIMITS.exprLength} characters`, 0);
  return new Parser(text, tokenize(text)).parse();
}

/** A recursive-descent parser over one expression's tokens: a literal, a call, or a path. */
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
    if (token?.kind !== 'punct' || token.text !== punct) throw new ExpressionSyntaxError(`expected '${punct}'${token ? ` but found '${token.text}'` : ' at the end'}`, token?.start ?? this.text.length);
    return token;
  }

  private expression(depth: number): Expr {
    if (depth > LIMITS.depth) throw new ExpressionSyntaxError(`expression nested deeper than ${LIMITS.depth}`, this.peek()?.start ?? 0);
    const token = this.next();
    if (!token) throw new ExpressionSyntaxError('empty expression', this.text.length);
    if (token.kind === 'string' || token.kind === 'number') return { kind: 'literal', value: token.value!, start: token.start, end: token.end };
    if (token.kind !== 'ident') throw new ExpressionSyntaxError(`unexpected '${token.text}'`, token.start);
    if (token.text === 'true' || token.text === 'false' || token.text === 'null') {
      return { kind: 'literal', value: token.text === 'null' ? null : token.text === 'true', start: token.start, end: token.end };
    }
    if (this.peek()?.text === '(') return this.call(token, depth);
    if (!(ROOTS as readonly string[]).includes(token.text)) {
      throw new ExpressionSyntaxError(`unknown name '${token.text}'; an expression starts with ${ROOTS.join(', ')}, a function or a literal`, token.start);
    }
    return this.path(token);
  }

  /** `name(arg, …)`, its name and number of arguments checked; `name` is already read. */
  private call(token: Token, depth: number): Expr {
    if (!(token.text in FUNCTIONS)) throw new ExpressionSyntaxError(`unknown function '${token.text}'; the functions are ${Object.keys(FUNCTIONS).join(', ')}`, token.start);
    const name = token.text as FunctionName;
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
      throw new ExpressionSyntaxError(`${name}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}`, token.start);
    }
    return { kind: 'call', name, args, start: token.start, end: close.end };
  }

  /** `root.field[0]['key'][*]…`; the root is already read. */
  private path(root: Token): Expr {
    const segments: Segment[] = [];
    let end = root.end;
    for (;;) {
      const following = this.peek();
      if (following?.text === '.') {
        this.next();
        const name = this.next();
        if (!name || (name.kind !== 'ident' && name.kind !== 'number')) throw new ExpressionSyntaxError(`expected a name after '.'`, name?.start ?? following.end);
        if (name.kind === 'number' && !/^\d+$/.test(name.text)) throw new ExpressionSyntaxError(`expected a name after '.'`, name.start);
        segments.push({ kind: 'field', name: name.text });
        end = name.end;
      } else if (following?.text === '[') {
        this.next();
        segments.push(this.bracketed(following));
        end = this.expect(']').end;
      } else break;
      if (segments.length > LIMITS.depth * 4) throw new ExpressionSyntaxError('path too long', following.start);
    }
    return { kind: 'path', root: root.text, segments, start: root.start, end };
  }

  /** What is inside `[ ]`: `*`, an index or a quoted key. */
  private bracketed(open: Token): Segment {
    const inside = this.next();
    if (inside?.kind === 'punct' && inside.text === '*') return { kind: 'wildcard' };
    if (inside?.kind === 'number' && Number.isInteger(inside.value) && (inside.value as number) >= 0) return { kind: 'index', index: inside.value as number };
    if (inside?.kind === 'string') return { kind: 'field', name: inside.value as string };
    throw new ExpressionSyntaxError(`expected an index, a quoted key or * inside [ ]`, inside?.start ?? open.end);
  }
}
