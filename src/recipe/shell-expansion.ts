/** Why the shell would not expand a `${PIPELINE_EXPR_<n>}` of a text command. */
export type NotExpanded = 'single-quoted' | 'escaped' | 'quoted-here-document';

interface HereDocument {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
}

const WORD_END = /[\s;&|<>()]/;
const COMMENT_AFTER = /[\s;&|()]/;

/**
 * Reads a POSIX shell script as far as quoting goes: enough to tell, for each variable reference
 * at `slots` (offsets of `${NAME}`), whether the shell expands it. Quotes, `\`, `$'…'`, `$(…)`,
 * backquotes, `${…}`, comments and here-documents are followed; nothing else of the grammar is.
 */
class QuotingScanner {
  private at = 0;
  readonly notExpanded = new Map<number, NotExpanded>();

  constructor(
    private readonly text: string,
    private readonly slots: ReadonlySet<number>,
  ) {}

  /** Unquoted words up to `end` (a closing `)`, backquote or `}`), or to the end of the text. */
  words(end?: string): void {
    let depth = 0;
    const pending: HereDocument[] = [];
    while (this.at < this.text.length) {
      if (this.skipSlot()) continue;
      const c = this.text[this.at]!;
      if (c === end && depth === 0) {
        this.at++;
        return;
      }
      if (c === '(') depth++;
      else if (c === ')') depth--;
      if (c === '\\') this.escape(2);
      else if (c === "'") this.singleQuoted(this.at + 1, false);
      else if (c === '"') this.doubleQuoted('"', this.text.length, 1);
      else if (c === '`') this.nested('`', 1);
      else if (c === '$') this.dollar(true);
      else if (c === '#' && (this.at === 0 || COMMENT_AFTER.test(this.text[this.at - 1]!))) this.comment();
      else if (this.text.startsWith('<<<', this.at)) this.at += 3;
      else if (this.text.startsWith('<<', this.at)) pending.push(this.hereDocumentStart());
      else if (c === '\n') {
        this.at++;
        for (const document of pending.splice(0)) this.hereDocumentBody(document);
      } else this.at++;
    }
  }

  /** Text between double quotes, or an unquoted here-document's body (up to `limit`). */
  private doubleQuoted(end: string | undefined, limit: number, skip: number): void {
    this.at += skip;
    while (this.at < limit) {
      if (this.skipSlot()) continue;
      const c = this.text[this.at]!;
      if (c === end) {
        this.at++;
        return;
      }
      if (c === '\\') this.escape('$`"\\\n'.includes(this.text[this.at + 1] ?? '') ? 2 : 1);
      else if (c === '`') this.nested('`', 1);
      else if (c === '$') this.dollar(false);
      else this.at++;
    }
  }

  private dollar(unquoted: boolean): void {
    const next = this.text[this.at + 1];
    if (next === "'" && unquoted) this.singleQuoted(this.at + 2, true);
    else if (next === '$') this.escape(2);
    else if (next === '(') this.nested(')', 2);
    else if (next === '{') this.nested('}', 2);
    else this.at++;
  }

  private nested(end: string, skip: number): void {
    this.at += skip;
    this.words(end);
  }

  /** A reference at the cursor: the shell expands it here. */
  private skipSlot(): boolean {
    if (!this.slots.has(this.at)) return false;
    this.at = this.text.indexOf('}', this.at) + 1;
    return true;
  }

  /** `\x` or `$$`: the second character is taken as it is. */
  private escape(width: number): void {
    if (width === 2) this.mark(this.at + 1, this.at + 2, 'escaped');
    this.at += width;
  }

  private singleQuoted(from: number, backslashEscapes: boolean): void {
    let close = from;
    while (close < this.text.length && this.text[close] !== "'")
      close += backslashEscapes && this.text[close] === '\\' ? 2 : 1;
    this.mark(from, close, 'single-quoted');
    this.at = close + 1;
  }

  /** A comment: what it holds is never run, so a reference in it is harmless. */
  private comment(): void {
    const end = this.text.indexOf('\n', this.at);
    this.at = end < 0 ? this.text.length : end;
  }

  private hereDocumentStart(): HereDocument {
    this.at += 2;
    const stripTabs = this.text[this.at] === '-';
    if (stripTabs) this.at++;
    while (this.text[this.at] === ' ' || this.text[this.at] === '\t') this.at++;
    const start = this.at;
    while (this.at < this.text.length && !WORD_END.test(this.text[this.at]!)) {
      const c = this.text[this.at]!;
      const close = c === "'" || c === '"' ? this.text.indexOf(c, this.at + 1) : -1;
      this.at = close > 0 ? close + 1 : this.at + 1;
    }
    const word = this.text.slice(start, this.at);
    return { delimiter: word.replace(/['"\\]/g, ''), quoted: /['"\\]/.test(word), stripTabs };
  }

  private hereDocumentBody({ delimiter, quoted, stripTabs }: HereDocument): void {
    const start = this.at;
    let line = start;
    let end = this.text.length;
    let after = this.text.length;
    while (line < this.text.length) {
      const lineEnd = this.text.indexOf('\n', line) < 0 ? this.text.length : this.text.indexOf('\n', line);
      const content = this.text.slice(line, lineEnd);
      if ((stripTabs ? content.replace(/^\t+/, '') : content) === delimiter) {
        end = line;
        after = lineEnd + 1;
        break;
      }
      line = lineEnd + 1;
    }
    if (quoted) this.mark(start, end, 'quoted-here-document');
    else this.doubleQuoted(undefined, end, 0);
    this.at = after;
  }

  private mark(from: number, to: number, why: NotExpanded): void {
    for (const slot of this.slots)
      if (slot >= from && slot < to && !this.notExpanded.has(slot)) this.notExpanded.set(slot, why);
  }
}

/** The references among `slots` (offsets of `${NAME}` in `script`) that the shell would not expand, and why. */
export function unexpandedReferences(script: string, slots: readonly number[]): Map<number, NotExpanded> {
  const scanner = new QuotingScanner(script, new Set(slots));
  scanner.words();
  return scanner.notExpanded;
}
