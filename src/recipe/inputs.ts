import { isAbsolute, relative, resolve } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { error, type Diagnostic } from './diagnostics.js';
import { RECIPE_LIMITS } from './input-limits.js';
import { SourceFile, type SourceRange } from './source.js';

export type InputType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'file';

export interface InputDefinition {
  type: InputType;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

/** The file system as the analyzer may see it: whether a path is a file, and its size. */
export type FileProbe = (absolutePath: string) => { size: number } | undefined;

export const UPLOAD_LIMIT_BYTES = 16 * 1024 * 1024;

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
      return { ok: false, reason: `must be true or false, got ${JSON.stringify(text)}` };
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
): { absolute: string; problem?: string } {
  const absolute = isAbsolute(path) ? path : resolve(base, path);
  const found = probe(absolute);
  const shown = relative(cwd, absolute);
  if (!found)
    return {
      absolute,
      problem: `file ${path} does not exist (looked for ${shown.startsWith('..') || isAbsolute(shown) ? absolute : shown})`,
    };
  if (found.size > UPLOAD_LIMIT_BYTES)
    return {
      absolute,
      problem: `file ${path} is ${(found.size / 1024 / 1024).toFixed(1)} MB; the upload limit is 16 MB`,
    };
  return { absolute };
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

/** Reads a CSV (header row of input names) or JSONL (one object a line) batch file. */
export function readBatch(
  path: string,
  text: string,
): { file: SourceFile; rows: BatchRow[]; diagnostics: Diagnostic[] } {
  const file = new SourceFile(path, text);
  const rows: BatchRow[] = [];
  const diagnostics: Diagnostic[] = [];
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineRange = (line: number): SourceRange => ({
    start: lineStarts[line - 1] ?? 0,
    end: (lineStarts[line] ?? text.length + 1) - 1,
  });
  const tooMany = (range: SourceRange) =>
    error(
      file,
      range,
      `the batch file has more than ${RECIPE_LIMITS.batchRows.toLocaleString('en-US')} rows; a batch file may have at most ${RECIPE_LIMITS.batchRows.toLocaleString('en-US')}`,
    );
  if (path.endsWith('.jsonl') || path.endsWith('.ndjson')) {
    const lines = text.split('\n');
    let read = 0;
    for (const [index, line] of lines.entries()) {
      if (line.trim() === '') continue;
      const range = lineRange(index + 1);
      if (++read > RECIPE_LIMITS.batchRows) {
        diagnostics.push(tooMany(range));
        break;
      }
      try {
        const value: unknown = JSON.parse(line);
        if (typeof value !== 'object' || value === null || Array.isArray(value))
          diagnostics.push(error(file, range, 'each line must be a JSON object of input values'));
        else rows.push({ values: value as Record<string, unknown>, range, raw: false });
      } catch (cause) {
        diagnostics.push(error(file, range, `not valid JSON: ${(cause as Error).message}`));
      }
    }
  } else if (path.endsWith('.csv')) {
    try {
      // Rows are checked one by one, so that one row with the wrong number of cells hides no other.
      const records = parseCsv(text, {
        skip_empty_lines: true,
        trim: true,
        info: true,
        bom: true,
        relax_column_count: true,
      }) as Array<{ record: string[]; info: { lines: number } }>;
      const header = records[0]?.record ?? [];
      const beyond = records[RECIPE_LIMITS.batchRows + 1];
      if (beyond) diagnostics.push(tooMany(lineRange(beyond.info.lines)));
      for (const { record, info } of records.slice(1, RECIPE_LIMITS.batchRows + 1)) {
        const range = lineRange(info.lines);
        if (record.length !== header.length) {
          const problem = `this row has ${record.length} value${record.length === 1 ? '' : 's'} but the header has ${header.length} columns (${header.join(', ')})`;
          rows.push({ values: {}, range, raw: true, problem });
        } else rows.push({ values: Object.fromEntries(header.map((name, i) => [name, record[i]!])), range, raw: true });
      }
    } catch (cause) {
      const line = (cause as { lines?: number }).lines ?? 1;
      diagnostics.push(
        error(
          file,
          lineRange(line),
          `not valid CSV: ${(cause as Error).message.replace(/^Invalid Record Length: /, '')}`,
        ),
      );
    }
  } else {
    diagnostics.push(
      error(file, { start: 0, end: Math.min(1, text.length) }, 'a batch file must end in .csv or .jsonl'),
    );
  }
  if (rows.length === 0 && diagnostics.length === 0)
    diagnostics.push(error(file, { start: 0, end: Math.min(1, text.length) }, 'the batch file has no rows'));
  return { file, rows, diagnostics };
}
