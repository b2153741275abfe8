import { ExpressionSyntaxError, OPERATORS } from './syntax.js';

export type Token = {
  kind: 'ident' | 'number' | 'string' | 'punct' | 'operator';
  text: string;
  value?: string | number;
  start: number;
  end: number;
};

const TWO_CHAR_OPERATORS = ['==', '!=', '<=', '>=', '&&', '||'];
/** What a user probably meant by a character that is no operator. */
const SLIPS: Record<string, string> = { '=': '==', '&': '&&', '|': '||' };
/** The first characters of the operators and of the slips. */
const OPERATOR_STARTS = '=!<>&|';

function operatorAt(text: string, at: number): Token | undefined {
  const one = text[at]!;
  // Most tokens start with a letter: no operator, no slip, and no substring made to find out.
  if (!OPERATOR_STARTS.includes(one)) return undefined;
  const two = text.slice(at, at + 2);
  if (TWO_CHAR_OPERATORS.includes(two)) return { kind: 'operator', text: two, start: at, end: at + 2 };
  if (one === '!' || one === '<' || one === '>') return { kind: 'operator', text: one, start: at, end: at + 1 };
  const meant = SLIPS[one];
  if (meant)
    throw new ExpressionSyntaxError(
      `'${one}' is not an operator; did you mean '${meant}'? The operators are ${OPERATORS.join(' ')}`,
      at,
    );
  return undefined;
}

/** As /\s/: a space, tab or line break answered without a regular expression, which ran for every character. */
function isSpace(code: number, char: string): boolean {
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(char);
}

const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The tokens of an expression's text: names, numbers, quoted strings and punctuation. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    if (isSpace(text.charCodeAt(at), char)) {
      at++;
      continue;
    }
    if ('.[](),*'.includes(char)) {
      tokens.push({ kind: 'punct', text: char, start: at, end: at + 1 });
      at++;
      continue;
    }
    const operator = operatorAt(text, at);
    if (operator) {
      tokens.push(operator);
      at = operator.end;
      continue;
    }
    if (char === "'" || char === '"') {
      let value = '';
      let end = at + 1;
      for (;;) {
        if (end >= text.length) throw new ExpressionSyntaxError('unterminated string', at);
        const c = text[end]!;
        if (c === '\\' && end + 1 < text.length) {
          value += text[end + 1];
          end += 2;
        } else if (c === char) {
          // A doubled quote stands for itself, as in YAML's single-quoted strings.
          if (text[end + 1] === char) {
            value += char;
            end += 2;
          } else break;
        } else {
          value += c;
          end++;
        }
      }
      tokens.push({ kind: 'string', text: text.slice(at, end + 1), value, start: at, end: end + 1 });
      at = end + 1;
      continue;
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (number && (char === '-' || /\d/.test(char))) {
      tokens.push({ kind: 'number', text: number[0], value: Number(number[0]), start: at, end: at + number[0].length });
      at += number[0].length;
      continue;
    }
    IDENT.lastIndex = at;
    const ident = IDENT.exec(text);
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], start: at, end: at + ident[0].length });
      at += ident[0].length;
      continue;
    }
    const arithmetic = '+-/%'.includes(char) ? '; there is no arithmetic' : '';
    throw new ExpressionSyntaxError(
      `unexpected character ${JSON.stringify(char)}${arithmetic}; the operators are ${OPERATORS.join(' ')}`,
      at,
    );
  }
  return tokens;
}
