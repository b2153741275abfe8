import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** Offsets into the recipe text: `start` inclusive, `end` exclusive. */
export interface SourceRange {
  start: number;
  end: number;
}

/** Where each value of the parsed recipe came from, by its path (`steps/hero/with/prompt`). */
export interface Located {
  /** The value itself. */
  value: SourceRange;
  /** The key that names it, for values inside a mapping. */
  key?: SourceRange;
}

export type PathPart = string | number;

export const pointer = (path: readonly PathPart[]) => path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** A recipe file: its text, line table, and the location of every node. */
export class SourceFile {
  readonly lines: LineCounter;
  private readonly locations = new Map<string, Located>();

  constructor(
    readonly path: string,
    readonly text: string,
  ) {
    this.lines = new LineCounter();
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; col: number } {
    const { line, col } = this.lines.linePos(Math.min(offset, this.text.length));
    return { line, col };
  }

  lineText(line: number): string {
    return this.text.split('\n')[line - 1]?.replace(/\r$/, '') ?? '';
  }

  record(path: readonly PathPart[], located: Located): void {
    this.locations.set(pointer(path), located);
  }

  /** The location of the value at `path`, or of its nearest located ancestor. */
  locate(path: readonly PathPart[], which: 'value' | 'key' = 'value'): SourceRange {
    for (let depth = path.length; depth >= 0; depth--) {
      const found = this.locations.get(pointer(path.slice(0, depth)));
      if (found) return (which === 'key' && found.key) || found.value;
    }
    return { start: 0, end: 0 };
  }

  /** The range of `needle` inside the source of the value at `path` (an expression inside a string), else the whole value. */
  locateWithin(path: readonly PathPart[], needle: string): SourceRange {
    const range = this.locate(path);
    const at = this.text.slice(range.start, range.end).indexOf(needle);
    return at >= 0 ? { start: range.start + at, end: range.start + at + needle.length } : range;
  }
}

export interface YamlProblem {
  message: string;
  range: SourceRange;
}

/** Parses YAML, keeping the source range of every node. Syntax errors come back all at once. */
export function parseRecipeYaml(path: string, text: string): { source: SourceFile; value: unknown; problems: YamlProblem[] } {
  const source = new SourceFile(path, text);
  const document = parseDocument(text, { lineCounter: source.lines, prettyErrors: false, uniqueKeys: true, strict: true });
  const problems: YamlProblem[] = document.errors.map((error) => ({
    message: error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''),
    range: { start: error.pos[0], end: Math.max(error.pos[1], error.pos[0] + 1) },
  }));
  if (problems.length > 0) return { source, value: undefined, problems };
  if (document.contents) walk(source, document.contents as Node, []);
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    problems.push({ message: (error as Error).message, range: { start: 0, end: 1 } });
  }
  return { source, value, problems };
}

function rangeOf(node: Node | null | undefined): SourceRange {
  const range = node?.range;
  return range ? { start: range[0], end: Math.max(range[1], range[0]) } : { start: 0, end: 0 };
}

function walk(source: SourceFile, node: Node, path: PathPart[], key?: SourceRange): void {
  source.record(path, { value: rangeOf(node), ...(key ? { key } : {}) });
  if (isMap(node)) {
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const name = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const keyRange = rangeOf(keyNode);
      if (pair.value) walk(source, pair.value as Node, [...path, name], keyRange);
      else source.record([...path, name], { value: keyRange, key: keyRange });
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => walk(source, item as Node, [...path, index]));
  }
}
