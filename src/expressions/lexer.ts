import { ExpressionSyntaxError } from './syntax.js';

export type Token = { kind: 'ident' | 'number' | 'string' | 'punct'; text: string; value?: string | number; start: number; end: number };

const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** The tokens of an expression's text: names, numbers, quoted strings and punctuation. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at]!;
    if (/\s/.test(char)) {
      at++;
      continue;
    }
    if ('.[](),*'.includes(char)) {
      tokens.push({ kind: 'punct', text: char, start: at, end: at + 1 });
      at++;
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
    throw new ExpressionSyntaxError(`unexpected character ${JSON.stringify(char)}`, at);
  }
  return tokens;
}
