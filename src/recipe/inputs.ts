import { createRequire } from 'node:module';
import { isAbsolute, relative, resolve } from 'node:path';
import { error, type Diagnostic } from './diagnostics.js';
import { RECIPE_LIMITS } from './input-limits.js';
import { SourceFile, type SourceRange } from './source.js';
import { plural } from '../format.js';
import { UPLOAD_LIMIT_BYTES, UPLOAD_LIMIT_TEXT } from '../wire/limits.js';

export type InputType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'file';

export interface InputDefinition {
  type: InputType;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

/**
 * The file system as the analyzer may see it: a path's file and its size; `folder` when the path is
 * a folder (no file to send); undefined when nothing is there. Asked for a file that goes to a
 * media field (`use` is `'media'`), it may also say what its bytes are: `mime` is the sniffed type,
 * null when they are no known type, absent when they were not read (the analyzer does no I/O: the
 * bytes are read between two analyses, see `session/recipe.ts`).
 */
export type FileProbe = (
  absolutePath: string,
  use?: 'media',
) => { size: number; folder?: boolean; mime?: string | null } | undefined;

/** A value given as text (`--set`, a CSV cell), read as its input's type; undefined with a reason when it cannot be. */
export function coerce(type: InputType, text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  switch (type) {
    case 'string':
    case 'file':
      return { ok: true, value: text };
    case 'integer':
      return /^-?\d+$/.test(text.trim())
        ? { ok: true, value: Number(text) }
        : { ok: false, reason: `must be an integer, got ${JSON.stringify(text)}` };
    case 'number':
      return text.trim() !== '' && Number.isFinite(Number(text))
        ? { ok: true, value: Number(text) }
        : { ok: false, reason: `must be a number, got ${JSON.stringify(text)}` };
    case 'boolean': {
      const word = text.trim().toLowerCase();
      if (['true', 'yes', '1'].includes(word)) return { ok: true, value: true };
      if (['false', 'no', '0'].includes(word)) return { ok: true, value: false };
      return { ok: false, reason: `must be true or false (or yes/no, 1/0), got ${JSON.stringify(text)}` };
    }
    case 'array':
    case 'object': {
      try {
        const value: unknown = JSON.parse(text);
        const isArray = Array.isArray(value);
        if (type === 'array' ? isArray : typeof value === 'object' && value !== null && !isArray)
          return { ok: true, value };
      } catch {
        // Falls through to the reason below.
      }
      return {
        ok: false,
        reason: `must be a JSON ${type === 'array' ? 'list such as ["a","b"]' : 'object such as {"a":1}'}, got ${JSON.stringify(text)}`,
      };
    }
  }
}

/** Problems of a value against its definition (type, enum, bounds), as reasons; empty when fine. */
export function checkValue(definition: InputDefinition, value: unknown): string[] {
  const problems: string[] = [];
  const type = definition.type;
  const typeOk =
    type === 'string' || type === 'file'
      ? typeof value === 'string'
      : type === 'integer'
        ? Number.isInteger(value)
        : type === 'number'
          ? typeof value === 'number' && Number.isFinite(value)
          : type === 'boolean'
            ? typeof value === 'boolean'
            : type === 'array'
              ? Array.isArray(value)
              : typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!typeOk)
    return [
      `must be ${type === 'integer' ? 'an integer' : type === 'array' ? 'a list' : type === 'object' ? 'an object' : type === 'file' ? 'a file path' : `a ${type}`}, got ${JSON.stringify(value)}`,
    ];
  if (definition.enum && !definition.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
    problems.push(
      `must be one of ${definition.enum.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  if (typeof value === 'number') {
    if (definition.minimum !== undefined && value < definition.minimum)
      problems.push(`must be at least ${definition.minimum}, got ${value}`);
    if (definition.maximum !== undefined && value > definition.maximum)
      problems.push(`must be at most ${definition.maximum}, got ${value}`);
  }
  return problems;
}

/**
 * A file input's path made absolute (against `base`), and its problems: missing, or over the
 * upload limit. Messages show where it looked relative to `cwd` when that is shorter.
 */
export function checkFile(
  path: string,
  base: string,
  probe: FileProbe,
  cwd = base,
  use?: 'media',
): { absolute: string; problem?: string; mime?: string | null } {
  const absolute = isAbsolute(path) ? path : resolve(base, path);
  const found = probe(absolute, use);
  const shown = relative(cwd, absolute);
  const lookedAt = shown.startsWith('..') || isAbsolute(shown) ? absolute : shown;
  if (!found) return { absolute, problem: `file ${path} does not exist (looked for ${lookedAt})` };
  if (found.folder) return { absolute, problem: `${path} is a folder, not a file (${lookedAt})` };
  if (found.size > UPLOAD_LIMIT_BYTES)
    return {
      absolute,
      problem: `file ${path} is ${(found.size / 1024 / 1024).toFixed(1)} MB; the upload limit is ${UPLOAD_LIMIT_TEXT}`,
    };
  return found.mime === undefined ? { absolute } : { absolute, mime: found.mime };
}

/** `--set` values as a source file of their own, so that diagnostics can point at them. */
export function setsSource(sets: readonly string[]): {
  file: SourceFile;
  entries: Array<{ name: string; text: string; nameRange: SourceRange; valueRange: SourceRange }>;
} {
  const text = sets.map((s) => `--set ${s}`).join(' ');
  const file = new SourceFile('command line', text);
  const entries = [];
  let at = 0;
  for (const set of sets) {
    const start = text.indexOf(set, at);
    const equals = set.indexOf('=');
    const name = equals < 0 ? set : set.slice(0, equals);
    entries.push({
      name,
      text: equals < 0 ? '' : set.slice(equals + 1),
      nameRange: { start, end: start + name.length },
      valueRange:
        equals < 0 ? { start, end: start + set.length } : { start: start + equals + 1, end: start + set.length },
    });
    at = start + set.length;
  }
  return { file, entries };
}

export interface BatchRow {
  /** Input name → raw value (text for CSV, JSON for JSONL). */
  values: Record<string, unknown>;
  /** Where the row is, for diagnostics. */
  range: SourceRange;
  raw: boolean;
  /** Why the row cannot be read (a CSV row with the wrong number of cells); its values are empty. */
  problem?: string;
}

/** What reading a batch file found besides its rows. */
export interface BatchReading {
  /** Problems of the file and of rows that could not be read (a JSONL line that is no object). */
  diagnostics: Diagnostic[];
  /**
   * The file could not be read to its end (a CSV syntax error): the rows handed over before the
   * error are to be forgotten, as if none had been read.
   */
  unreadable: boolean;
}

/** Stops csv-parse from within a record callback, at the first row past the row limit. */
const PAST_THE_LIMIT = Symbol('past the batch row limit');

/** A CSV header's names that cannot name inputs: one given twice (the later column would win unsaid), or none. */
function headerProblems(file: SourceFile, names: readonly string[], line: number): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const first = new Map<string, number>();
  names.forEach((name, column) => {
    if (name === '') {
      problems.push(error(file, file.lineRange(line), `column ${column + 1} of the header has no name`));
      return;
    }
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, column);
    else
      problems.push(
        error(
          file,
          file.lineRange(line),
          `the header names '${name}' twice (columns ${earlier + 1} and ${column + 1})`,
        ),
      );
  });
  return problems;
}

/**
 * Reads a CSV (header row of input names) or JSONL (one object a line) batch file, handing each row
 * to `visit` as it is read: no list of the file's rows (nor csv-parse's records) is ever held, so a
 * million-row file costs the memory of its text and of the rows the caller keeps.
 */
export function readBatch(file: SourceFile, visit: (row: BatchRow) => void): BatchReading {
  const { path, text } = file;
  const diagnostics: Diagnostic[] = [];
  let rows = 0;
  const tooMany = (range: SourceRange) =>
    error(
      file,
      range,
      `the batch file has more than ${RECIPE_LIMITS.batchRows.toLocaleString('en-US')} rows; a batch file may have at most ${RECIPE_LIMITS.batchRows.toLocaleString('en-US')}`,
    );
  let unreadable = false;
  if (path.endsWith('.jsonl') || path.endsWith('.ndjson')) {
    // Line by line with indexOf: splitting the text would hold every line at once.
    for (let start = 0, line = 1; start <= text.length; line++) {
      const newline = text.indexOf('\n', start);
      const end = newline < 0 ? text.length : newline;
      // A UTF-8 byte order mark, as some editors write, is no part of the first object.
      const content = text.slice(line === 1 && text.charCodeAt(0) === 0xfeff ? 1 : start, end);
      start = end + 1;
      if (content.trim() === '') continue;
      const range = file.lineRange(line);
      if (rows >= RECIPE_LIMITS.batchRows) {
        diagnostics.push(tooMany(range));
        break;
      }
      rows++;
      try {
        const value: unknown = JSON.parse(content);
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          diagnostics.push(error(file, range, 'each line must be a JSON object of input values'));
        else visit({ values: value as Record<string, unknown>, range, raw: false });
      } catch (cause) {
        diagnostics.push(error(file, range, `not valid JSON: ${(cause as Error).message}`));
      }
    }
  } else if (path.endsWith('.csv')) {
    let header: string[] | undefined;
    const cells = new SharedCells();
    // A throw inside csv-parse's callback comes back as its error: a bug is carried out by hand.
    let bug: unknown;
    try {
      // Loaded on use: only a CSV batch needs it, and every `validate` would pay for loading it.
      const { parse: parseCsv } = createRequire(import.meta.url)('csv-parse/sync') as typeof import('csv-parse/sync');
      // Rows are checked one by one, so that one row with the wrong number of cells hides no other.
      parseCsv(text, {
        skip_empty_lines: true,
        trim: true,
        bom: true,
        relax_column_count: true,
        // Any line ending, in any mix: detected from the first line alone, a file whose later lines
        // end otherwise (rows pasted from another editor) had those rows read as one row's values.
        record_delimiter: ['\r\n', '\n', '\r'],
        on_record: (record: string[], context: { lines: number }) => {
          try {
            if (!header) {
              header = record;
              diagnostics.push(...headerProblems(file, record, context.lines));
              return null;
            }
            const range = file.lineRange(context.lines);
            if (rows >= RECIPE_LIMITS.batchRows) {
              diagnostics.push(tooMany(range));
              throw PAST_THE_LIMIT;
            }
            rows++;
            if (record.length !== header.length) {
              const problem = `this row has ${plural(record.length, 'value')} but the header has ${plural(header.length, 'column')} (${header.join(', ')})`;
              visit({ values: {}, range, raw: true, problem });
            } else {
              const values: Record<string, unknown> = {};
              for (let i = 0; i < header.length; i++) values[header[i]!] = cells.shared(i, record[i]!);
              visit({ values, range, raw: true });
            }
          } catch (cause) {
            if (cause !== PAST_THE_LIMIT) bug = cause;
            throw cause;
          }
          // Nothing is kept: the row went to `visit`.
          return null;
        },
      });
    } catch (cause) {
      if (bug !== undefined) throw bug;
      if (cause !== PAST_THE_LIMIT) {
        const line = (cause as { lines?: number }).lines ?? 1;
        unreadable = true;
        rows = 0;
        diagnostics.length = 0;
        // csv-parse names the line where the file ended inside the quote: the quote that opened it says more.
        const opened =
          (cause as { code?: string }).code === 'CSV_QUOTE_NOT_CLOSED' ? unclosedCsvQuote(text) : undefined;
        diagnostics.push(
          opened === undefined
            ? error(
                file,
                file.lineRange(line),
                `not valid CSV: ${(cause as Error).message.replace(/^Invalid Record Length: /, '')}`,
              )
            : error(
                file,
                { start: opened, end: opened + 1 },
                'not valid CSV: the value this " opens is never closed (a " inside a quoted value is written "")',
              ),
        );
      }
    }
  } else {
    diagnostics.push(
      error(file, { start: 0, end: Math.min(1, text.length) }, 'a batch file must end in .csv, .jsonl or .ndjson'),
    );
  }
  if (rows === 0 && diagnostics.length === 0)
    diagnostics.push(error(file, { start: 0, end: Math.min(1, text.length) }, 'the batch file has no rows'));
  return { diagnostics, unreadable };
}

/**
 * One string per distinct value of a column that repeats its values (a style, an aspect ratio):
 * a million rows then hold a handful of strings, not a million copies. A column found to have
 * more distinct values than `distinct` (a title) stops being looked up, and its table is dropped.
 */
class SharedCells {
  private readonly columns: Array<Map<string, string> | null> = [];

  constructor(private readonly distinct = 1_000) {}

  shared(column: number, cell: string): string {
    const known = this.columns[column];
    if (known === null) return cell;
    const table = known ?? new Map<string, string>();
    this.columns[column] = table;
    const same = table.get(cell);
    if (same !== undefined) return same;
    if (table.size >= this.distinct) this.columns[column] = null;
    else table.set(cell, cell);
    return cell;
  }
}

/**
 * Where the quote a CSV file never closes opens: a `"` that begins a value opens it, `""` inside is
 * one quote, and a lone `"` closes it. Undefined when every quote is closed.
 */
function unclosedCsvQuote(text: string): number | undefined {
  let opened: number | undefined;
  let fieldStart = true;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (opened !== undefined) {
      if (char !== '"') continue;
      if (text[i + 1] === '"') i++;
      else {
        opened = undefined;
        fieldStart = false;
      }
    } else if (char === '"' && fieldStart) opened = i;
    else if (char === ',' || char === '\n' || char === '\r') fieldStart = true;
    else if (char !== ' ' && char !== '\t') fieldStart = false;
  }
  return opened;
}
