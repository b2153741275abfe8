import type { SourceFile, SourceRange } from './source.js';

/** A user's mistake in a recipe (or its inputs), located in the file that holds it. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  message: string;
  /** The file the range points into: the recipe, or a batch file. */
  file: SourceFile;
  range: SourceRange;
}

const MAX_LINE = 120;

/**
 * `3 errors in recipe.yaml`, or in the files that hold them (`in rows.csv`, `in recipe.yaml and
 * rows.csv`): a batch file's bad rows are not the recipe's errors.
 */
export function errorsIn(diagnostics: readonly Diagnostic[]): string {
  // `--set` values are a source of their own, called `command line` where its errors point.
  const files = [
    ...new Set(diagnostics.map((d) => (d.file.path === 'command line' ? 'the command line' : d.file.path))),
  ];
  const where = files.length <= 2 ? files.join(' and ') : `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`;
  return `${diagnostics.length} error${diagnostics.length === 1 ? '' : 's'} in ${where}`;
}

export const error = (file: SourceFile, range: SourceRange, message: string): Diagnostic => ({
  severity: 'error',
  message,
  file,
  range,
});

/**
 * `recipe.yaml:12:9: error: message`, then the source line and `~~~` under the value (first line
 * of it, for a value over several lines).
 */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const { file, range } = diagnostic;
  const start = file.position(range.start);
  const end = file.position(Math.max(range.start, range.end - 1));
  const fullLine = file.lineText(start.line);
  let width =
    end.line === start.line ? Math.max(1, end.col - start.col + 1) : Math.max(1, fullLine.length - start.col + 1);
  // A very long line is shown as a window centred on the value (on its start, for a value nearly
  // as wide as the window), marked with … where it is cut.
  let shown = fullLine;
  let column = start.col - 1;
  if (fullLine.length > MAX_LINE) {
    const centre = column + Math.floor(Math.min(width, MAX_LINE - 40) / 2);
    const from = Math.max(0, Math.min(fullLine.length - MAX_LINE, centre - Math.floor(MAX_LINE / 2)));
    const to = Math.min(fullLine.length, from + MAX_LINE);
    shown = `${from > 0 ? '…' : ''}${fullLine.slice(from, to)}${to < fullLine.length ? '…' : ''}`;
    column = column - from + (from > 0 ? 1 : 0);
    width = Math.min(width, shown.length - column);
  }
  const gutter = String(start.line).length;
  return [
    `${file.path}:${start.line}:${start.col}: ${diagnostic.severity}: ${diagnostic.message}`,
    `${' '.repeat(gutter)} |`,
    `${start.line} | ${shown}`,
    `${' '.repeat(gutter)} | ${' '.repeat(column)}${'~'.repeat(Math.max(1, width))}`,
  ].join('\n');
}

export function formatDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return diagnostics.map(formatDiagnostic).join('\n\n');
}

/** Errors first by file order, then by position, so output is stable. */
export function sortDiagnostics(diagnostics: Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort((a, b) =>
    a.file.path === b.file.path ? a.range.start - b.range.start : a.file.path.localeCompare(b.file.path),
  );
}

/** The JSON form of a diagnostic, for `--json`. */
export function diagnosticJson(diagnostic: Diagnostic) {
  const start = diagnostic.file.position(diagnostic.range.start);
  const end = diagnostic.file.position(diagnostic.range.end);
  return {
    severity: diagnostic.severity,
    message: diagnostic.message,
    file: diagnostic.file.path,
    line: start.line,
    column: start.col,
    end_line: end.line,
    end_column: end.col,
  };
}
