import { parseExpression } from './parser.js';
import { ExpressionSyntaxError, LIMITS, type Expr } from './syntax.js';

/** A string from the recipe, split into literal text and expressions. */
export interface Template {
  parts: Array<string | { expr: Expr; source: string; offset: number }>;
  /** The string is one expression and nothing else: its value keeps its type. */
  whole: boolean;
}

/** Splits `a ${{ x }} b` into parts and parses each expression; errors carry their offset in the string. */
export function parseTemplate(text: string): Template {
  const parts: Template['parts'] = [];
  let at = 0;
  let count = 0;
  for (;;) {
    const open = text.indexOf('${{', at);
    if (open < 0) break;
    const close = text.indexOf('}}', open + 3);
    if (close < 0) throw new ExpressionSyntaxError("'${{' without a closing '}}'", open);
    if (++count > LIMITS.perString)
      throw new ExpressionSyntaxError(`more than ${LIMITS.perString} expressions in one string`, open);
    if (open > at) parts.push(text.slice(at, open));
    const inner = text.slice(open + 3, close);
    try {
      parts.push({ expr: parseExpression(inner), source: text.slice(open, close + 2), offset: open });
    } catch (error) {
      if (error instanceof ExpressionSyntaxError)
        throw new ExpressionSyntaxError(error.message, open + 3 + error.offset);
      throw error;
    }
    at = close + 2;
  }
  if (at < text.length) parts.push(text.slice(at));
  const expressions = parts.filter((p) => typeof p !== 'string');
  const whole = expressions.length === 1 && parts.every((p) => typeof p !== 'string' || p.trim() === '');
  return { parts, whole };
}

export const hasExpression = (text: string) => text.includes('${{');
