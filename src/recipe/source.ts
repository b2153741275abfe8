import { createRequire } from 'node:module';
import jsYaml from 'js-yaml';
import type { Node } from 'yaml';
import {
  documentSizeProblem,
  type LimitProblem,
  RECIPE_LIMITS,
  textDepthProblem,
  valueLimitProblem,
} from './input-limits.js';

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

/**
 * The `yaml` library, loaded on first use: a valid recipe without anchors never needs it (js-yaml
 * reads it), and loading it would cost every `validate` and `plan` more time than many analyses take.
 */
export const yamlLibrary = (() => {
  let library: typeof import('yaml') | undefined;
  return () => {
    library ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
    return library;
  };
})();

export const pointer = (path: readonly PathPart[]) =>
  path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * A recipe file: its text, line table, and the location of every node. Locations are built on
 * first use, by a second parse with `yaml` (which keeps ranges): a valid recipe never needs them.
 */
export class SourceFile {
  /** Where each line starts: a typed array, since a batch file may have a million lines. */
  private readonly lineStarts: Uint32Array;
  private locations: Map<string, Located> | undefined;
  private stepKeys: Map<string, number> | undefined;

  constructor(
    readonly path: string,
    readonly text: string,
    /** Whether the text is YAML whose nodes can be located; a command line or CSV is not. */
    private readonly yaml = false,
  ) {
    let lines = 1;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
    this.lineStarts = new Uint32Array(lines);
    for (let i = text.indexOf('\n'), line = 1; i >= 0; i = text.indexOf('\n', i + 1)) this.lineStarts[line++] = i + 1;
  }

  private located(): Map<string, Located> {
    if (!this.locations) {
      this.locations = new Map();
      if (this.yaml) {
        const { LineCounter, parseDocument } = yamlLibrary();
        const document = parseDocument(this.text, { lineCounter: new LineCounter(), uniqueKeys: false, strict: true });
        if (document.contents) walk(this, document.contents as Node, [], []);
      }
    }
    return this.locations;
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; col: number } {
    const at = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle]! <= at) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, col: at - this.lineStarts[low]! + 1 };
  }

  /** The range of a 1-based line, without its line break. */
  lineRange(line: number): SourceRange {
    return {
      start: this.lineStarts[line - 1] ?? 0,
      end: (this.lineStarts[line] ?? this.text.length + 1) - 1,
    };
  }

  lineText(line: number): string {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return '';
    const end = this.lineStarts[line] ?? this.text.length + 1;
    return this.text.slice(start, end - 1).replace(/\r$/, '');
  }

  record(path: readonly PathPart[], located: Located): void {
    this.located().set(pointer(path), located);
  }

  /** The location of the value at `path`, or of its nearest located ancestor. */
  locate(path: readonly PathPart[], which: 'value' | 'key' = 'value'): SourceRange {
    for (let depth = path.length; depth >= 0; depth--) {
      const found = this.located().get(pointer(path.slice(0, depth)));
      if (found) return (which === 'key' && found.key) || found.value;
    }
    return { start: 0, end: 0 };
  }

  /**
   * Where the key of step `id` starts, found without the locations (which take a second parse):
   * every planned step carries its place, and a valid recipe must not pay for that parse. Read from
   * the block mapping under a top-level `steps:`; undefined for a step written another way (a flow
   * mapping, a key split over lines), which `locate` then finds.
   */
  stepKeyOffset(id: string): number | undefined {
    this.stepKeys ??= blockStepKeys(this.text, this.lineStarts);
    return this.stepKeys.get(id);
  }

  /** The range of `needle` inside the source of the value at `path` (an expression inside a string), else the whole value. */
  locateWithin(path: readonly PathPart[], needle: string): SourceRange {
    const range = this.locate(path);
    const at = this.text.slice(range.start, range.end).indexOf(needle);
    return at >= 0 ? { start: range.start + at, end: range.start + at + needle.length } : range;
  }
}

/** A step's key in a block mapping: its indent, an optional quote, the id, the colon. */
const STEP_KEY = /^([ ]+)(["']?)([^\s"'#:{}[\],&*!|>%@`][^"':#]*?)\2[ \t]*:(?:[ \t]|$)/;

/** The offsets of the keys of the block mapping under a top-level `steps:` line, by step id. */
function blockStepKeys(text: string, lineStarts: Uint32Array): Map<string, number> {
  const keys = new Map<string, number>();
  let indent: number | undefined;
  let inSteps = false;
  for (let line = 0; line < lineStarts.length; line++) {
    const start = lineStarts[line]!;
    // A line indented past the keys (a step's own lines, most of them) is passed over unread.
    if (indent !== undefined && indentedPast(text, start, indent)) continue;
    const end = line + 1 < lineStarts.length ? lineStarts[line + 1]! - 1 : text.length;
    const content = text.slice(start, end).replace(/\r$/, '');
    if (/^\s*(#.*)?$/.test(content)) continue;
    if (!inSteps) {
      inSteps = /^steps[ \t]*:[ \t]*(#.*)?$/.test(content);
      continue;
    }
    const leading = content.length - content.trimStart().length;
    if (leading === 0) break;
    indent ??= leading;
    if (leading < indent) break;
    if (leading > indent) continue;
    const key = STEP_KEY.exec(content);
    if (key) keys.set(key[3]!, start + key[1]!.length);
  }
  return keys;
}

/** Whether the line at `start` begins with more than `indent` spaces. */
function indentedPast(text: string, start: number, indent: number): boolean {
  for (let i = start; i <= start + indent; i++) if (text.charCodeAt(i) !== 32) return false;
  return true;
}

export interface YamlProblem {
  message: string;
  range: SourceRange;
}

/** An anchor in the text: such files go through `yaml`, which bounds alias expansion. */
const ANCHOR = /(^|[\s,[{:-])&[^\s,[\]{}]/m;

/**
 * Parses a recipe. Values come from js-yaml (YAML 1.2 core schema), which is several times faster
 * than `yaml` on large files; syntax errors, duplicate keys and files with anchors go through
 * `yaml`, whose messages and ranges the diagnostics use. The input limits (RECIPE_LIMITS) are checked
 * on the way: the size first, the depth of the text before `yaml` builds values from it, and the
 * value itself before anything else reads it.
 */
export function parseRecipeYaml(
  path: string,
  text: string,
): { source: SourceFile; value: unknown; problems: YamlProblem[] } {
  const source = new SourceFile(path, text, true);
  const oversize = documentSizeProblem(text);
  if (oversize) return { source, value: undefined, problems: [{ message: oversize, range: { start: 0, end: 1 } }] };
  const commented = expressionsInComments(text);
  if (commented.length > 0) return { source, value: undefined, problems: commented };
  if (!ANCHOR.test(text)) {
    let value: unknown;
    let parsed = false;
    try {
      // js-yaml recurses: a text nested deeper than its stack throws here, and is measured below.
      value = jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA, json: false });
      parsed = true;
    } catch {
      // Reported below with yaml's words and ranges.
    }
    if (parsed) return { source, value, problems: limitProblems(source, value, true) };
  }
  const deep = textDepthProblem(text);
  if (deep) return { source, value: undefined, problems: [deep] };
  const { LineCounter, parseDocument } = yamlLibrary();
  const document = parseDocument(text, {
    lineCounter: new LineCounter(),
    prettyErrors: false,
    uniqueKeys: false,
    strict: true,
  });
  const firstLine = (error: Error) => error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  // yaml places an unclosed quote at the end of the file, past the last line: the quote that opened it says more.
  const quote = unclosedQuote(document.errors.map(firstLine), text);
  let problems = document.errors.map((error): YamlProblem => {
    const message = firstLine(error);
    if (quote && MISSING_QUOTE.test(message)) return quote;
    // Behind a quote never closed, a bracket is not the cause (the quote took its closing bracket in).
    const bracket = quote ? undefined : unendedFlow(document, message, error.pos[0]);
    return bracket ?? { message, range: { start: error.pos[0], end: Math.max(error.pos[1], error.pos[0] + 1) } };
  });
  problems = unquotedExpressionsInFlow(problems, text);
  // What yaml finds at the end of a file whose quote never closed (a flow map not ended) follows from the quote.
  if (quote) {
    const contentEnd = text.trimEnd().length;
    problems = problems.filter((problem) => problem.range.start < contentEnd);
  }
  if (problems.length === 0 && document.contents) walk(source, document.contents as Node, [], problems);
  if (problems.length > 0) return { source, value: undefined, problems };
  let value: unknown;
  try {
    // `yaml` refuses when its count reaches the limit: one more lets a file expand ALIAS_LIMIT aliases.
    value = document.toJS({ maxAliasCount: ALIAS_LIMIT + 1 });
  } catch (error) {
    return { source, value: undefined, problems: [aliasProblem(document, error as Error)] };
  }
  return { source, value, problems: limitProblems(source, value, false) };
}

/** A ` #` on a line, with `${{` after it: the only texts worth reading token by token. */
const COMMENTED_EXPRESSION = /[ \t]#[^\n]*\$\{\{/;

/**
 * Comments after a value that hold an expression: in a value without quotes, ` #` begins a YAML
 * comment, so `prompt: colour #ff0000 for ${{ inputs.app }}` sends `colour`, and the expression
 * after it is silently dropped. A whole-line comment, or one after a quoted value, is meant as one.
 */
function expressionsInComments(text: string): YamlProblem[] {
  if (!COMMENTED_EXPRESSION.test(text)) return [];
  const problems: YamlProblem[] = [];
  const visit = (token: unknown): void => {
    if (Array.isArray(token)) {
      for (const part of token) visit(part);
      return;
    }
    if (typeof token !== 'object' || token === null) return;
    const { type, offset, source } = token as { type?: string; offset?: number; source?: unknown };
    if (type === 'comment' && typeof offset === 'number' && typeof source === 'string') {
      const before = text.slice(text.lastIndexOf('\n', offset - 1) + 1, offset).trimEnd();
      if (source.includes('${{') && before !== '' && !/["']$/.test(before))
        problems.push({
          message:
            'this comment holds an expression: in a value without quotes, " #" begins a YAML comment and the value ends before it. Put the whole value in quotes',
          range: { start: offset, end: offset + source.length },
        });
      return;
    }
    for (const value of Object.values(token)) if (typeof value === 'object') visit(value);
  };
  for (const document of new (yamlLibrary().Parser)().parse(text)) visit(document);
  return problems;
}

/**
 * `with: { prompt: ${{ item }} }`: inside `{ … }` or `[ … ]` the braces of an unquoted expression
 * are YAML's own, and yaml reports half a dozen unexpected tokens on the line. One problem instead,
 * at the expression, saying to quote it; the line's other problems all follow from it.
 */
function unquotedExpressionsInFlow(problems: YamlProblem[], text: string): YamlProblem[] {
  const lineOf = (at: number) => text.lastIndexOf('\n', at - 1);
  const replaced = new Map<number, YamlProblem>();
  for (const problem of problems) {
    const at = problem.range.start;
    if (!/^Unexpected flow-map-start/.test(problem.message) || text.slice(at - 1, at + 2) !== '${{') continue;
    const line = lineOf(at);
    if (replaced.has(line)) continue;
    const close = text.indexOf('}}', at);
    const end = close === -1 ? at + 2 : close + 2;
    replaced.set(line, {
      message: `inside { … } or [ … ], put a value with an expression in quotes, the whole value: unquoted, the braces of ${text.slice(at - 1, end)} are read as YAML's`,
      range: { start: at - 1, end },
    });
  }
  if (replaced.size === 0) return problems;
  const kept = problems.filter((problem) => !replaced.has(lineOf(problem.range.start)));
  return [...kept, ...replaced.values()].sort((a, b) => a.range.start - b.range.start);
}

/** yaml's words for a quoted scalar the file never closes. */
const MISSING_QUOTE = /^Missing closing (["'])quote/;

/** The problem of a quote the file never closes, at the quote that opens it; undefined when there is none. */
function unclosedQuote(messages: string[], text: string): YamlProblem | undefined {
  for (const message of messages) {
    const mark = MISSING_QUOTE.exec(message)?.[1] as '"' | "'" | undefined;
    const start = mark ? unclosedQuoteAt(text, mark) : undefined;
    if (start !== undefined)
      return { message: `the text this ${mark} opens is never closed`, range: { start, end: start + 1 } };
  }
  return undefined;
}

/**
 * Where the quote a scalar never closes opens: everything after it is inside the scalar, so it is
 * the last such quote of the text that is not itself inside one (`\"` in double quotes, `''` in
 * single ones). Undefined when there is none.
 */
function unclosedQuoteAt(text: string, quote: '"' | "'"): number | undefined {
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] !== quote) continue;
    if (quote === "'" && text[i - 1] === "'") {
      i--;
      continue;
    }
    let backslashes = 0;
    while (quote === '"' && text[i - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return undefined;
}

/**
 * yaml names a flow map (`{`) or list (`[`) never ended at the line after it (past the last line at
 * the end of the file), in its grammar's words: the problem at the bracket that opened it instead,
 * the innermost one of that kind that starts before `errorAt` and runs on to it. Undefined for
 * another message, or when there is no such bracket.
 */
function unendedFlow(
  document: ReturnType<ReturnType<typeof yamlLibrary>['parseDocument']>,
  message: string,
  errorAt: number,
): YamlProblem | undefined {
  const kind = /^Flow (map|sequence) in block collection must be sufficiently indented/.exec(message)?.[1];
  if (!kind) return undefined;
  const { visit } = yamlLibrary();
  let opensAt: number | undefined;
  const consider = (node: { flow?: boolean; range?: [number, number, number] | null }) => {
    const range = node.range;
    if (!node.flow || !range || range[0] >= errorAt || range[1] < errorAt) return;
    if (opensAt === undefined || range[0] > opensAt) opensAt = range[0];
  };
  visit(document, kind === 'map' ? { Map: (_key, node) => consider(node) } : { Seq: (_key, node) => consider(node) });
  if (opensAt === undefined) return undefined;
  const [open, close, what] = kind === 'map' ? ['{', '}', 'map'] : ['[', ']', 'list'];
  return {
    message: `this ${open} is never closed: end the ${what} with ${close} (a ${what} written over several lines goes on indented past its key)`,
    range: { start: opensAt, end: opensAt + 1 },
  };
}

/** The aliases (`*name`) a file may expand, an alias of a node that holds aliases counting each of them. */
export const ALIAS_LIMIT = 100;

/**
 * Too many aliases, in this tool's words and at the first alias past the limit (the last alias when
 * nested aliases reached it sooner); any other failure of `toJS` as its own message, at the start.
 */
function aliasProblem(
  document: ReturnType<ReturnType<typeof yamlLibrary>['parseDocument']>,
  error: Error,
): YamlProblem {
  const { isAlias, visit } = yamlLibrary();
  if (!/alias/i.test(error.message)) return { message: error.message, range: { start: 0, end: 1 } };
  const aliases: Array<[number, number]> = [];
  visit(document, {
    Alias: (_key, node) => {
      if (isAlias(node) && node.range) aliases.push([node.range[0], node.range[1]]);
    },
  });
  const [start, end] = aliases[ALIAS_LIMIT] ?? aliases.at(-1) ?? [0, 1];
  return {
    message: `the file expands more than ${ALIAS_LIMIT} aliases (an alias of a node that holds aliases counts each of them)`,
    range: { start, end: Math.max(end, start + 1) },
  };
}

/**
 * The input limit a parsed recipe passes, located; none when within them all. `fromJsYaml`: the value
 * came from js-yaml, which can find the place again quickly; else `yaml` parsed it (anchors or an error).
 */
function limitProblems(source: SourceFile, value: unknown, fromJsYaml: boolean): YamlProblem[] {
  const problem = valueLimitProblem(value, { steps: true });
  if (!problem) return [];
  const range = fromJsYaml
    ? placeOfLimitProblem(source.text, problem)
    : problem.limit === 'depth'
      ? // Aliases can nest a value deeper than its text: then the alias is what the path leads to.
        textDepthProblem(source.text)?.range
      : undefined;
  return [{ message: problem.message, range: range ?? source.locate(problem.path, problem.atKey ? 'key' : 'value') }];
}

/**
 * Where a limit problem is in the text, found by parsing again with js-yaml and its listener, which
 * tells where each node starts and ends: several times faster than the locations `yaml` keeps, which
 * on a list of 100,000 entries cost a second. The same walk over the new value finds the same node.
 */
function placeOfLimitProblem(text: string, problem: LimitProblem): SourceRange | undefined {
  const starts: number[] = [];
  const collections = new Map<object, SourceRange>();
  let longText: SourceRange | undefined;
  let value: unknown;
  try {
    value = jsYaml.load(text, {
      schema: jsYaml.CORE_SCHEMA,
      json: false,
      listener(event, state) {
        if (event === 'open') {
          starts.push(state.position);
          return;
        }
        // A node's start is where its parser began, before the blank space in front of it.
        let start = starts.pop() ?? 0;
        while (start < state.position && /\s/.test(text[start]!)) start++;
        const range = { start, end: Math.max(start + 1, state.position) };
        const result: unknown = state.result;
        // An entry of a block list is closed twice, as itself and as the entry: the first is the tighter.
        if (typeof result === 'object' && result !== null) {
          if (!collections.has(result)) collections.set(result, range);
        } else if (typeof result === 'string' && result.length > RECIPE_LIMITS.textChars) longText ??= range;
      },
    });
  } catch {
    return undefined;
  }
  // Texts are leaves, met in the order of the text both here and in the walk: the first too long is the one.
  if (problem.limit === 'textChars') return longText;
  // Too many steps: the `steps` key says it best, when it starts a line as it does in a block mapping.
  const stepsKey = problem.limit === 'steps' ? /^steps[ \t]*:/m.exec(text) : null;
  if (stepsKey) return { start: stepsKey.index, end: stepsKey.index + 'steps'.length };
  const again = valueLimitProblem(value, { steps: true });
  return again?.node !== undefined ? collections.get(again.node as object) : undefined;
}

function rangeOf(node: Node | null | undefined): SourceRange {
  const range = node?.range;
  return range ? { start: range[0], end: Math.max(range[1], range[0]) } : { start: 0, end: 0 };
}

function walk(source: SourceFile, node: Node, path: PathPart[], problems: YamlProblem[], key?: SourceRange): void {
  const { isMap, isScalar, isSeq } = yamlLibrary();
  source.record(path, { value: rangeOf(node), ...(key ? { key } : {}) });
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const name = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const keyRange = rangeOf(keyNode);
      if (seen.has(name))
        problems.push({ message: `the key '${name}' appears twice in this mapping`, range: keyRange });
      seen.add(name);
      if (pair.value) walk(source, pair.value as Node, [...path, name], problems, keyRange);
      else source.record([...path, name], { value: keyRange, key: keyRange });
    }
  } else if (isSeq(node)) {
    for (const [index, item] of node.items.entries()) walk(source, item as Node, [...path, index], problems);
  }
}
