import { dirname, resolve } from 'node:path';
import type { AnalyzerInput, RawRecipe } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import {
  checkFile,
  checkValue,
  coerce,
  readBatch,
  setsSource,
  type BatchRow,
  type FileProbe,
  type InputDefinition,
} from './inputs.js';
import { didYouMean } from '../expressions/suggest.js';
import { givenValueProblem } from './input-limits.js';
import { RowOrigins } from './model-rows.js';
import { RowTable } from './row-table.js';
import { SourceFile } from './source.js';

/** The recipe's input definitions, each default checked against its own definition. */
export function checkInputDefinitions(
  recipe: RawRecipe,
  file: SourceFile,
  recipeDir: string,
  cwd: string,
  probe: FileProbe,
  diagnostics: Diagnostic[],
): Record<string, InputDefinition> {
  const definitions = recipe.inputs ?? {};
  for (const [name, definition] of Object.entries(definitions)) {
    if (definition.default === undefined) continue;
    const path = ['inputs', name, 'default'];
    for (const problem of checkValue(definition, definition.default))
      diagnostics.push(error(file, file.locate(path), `the default of input '${name}' ${problem}`));
    if (definition.type === 'file' && typeof definition.default === 'string') {
      const checked = checkFile(definition.default, recipeDir, probe, cwd);
      if (checked.problem) diagnostics.push(error(file, file.locate(path), checked.problem));
    }
  }
  return definitions;
}

type Row = Record<string, unknown>;

/** One input set per run: defaults, then the batch row, then `--set`, each checked against its definition. */
export function resolveRows(
  _recipe: RawRecipe,
  definitions: Record<string, InputDefinition>,
  input: AnalyzerInput,
  file: SourceFile,
  recipeDir: string,
  probe: FileProbe,
  diagnostics: Diagnostic[],
  skipped: Diagnostic[] = [],
  origins: RowOrigins = new RowOrigins(),
): RowTable | Row[] {
  const defaults: Row = {};
  for (const [name, definition] of Object.entries(definitions)) {
    if (definition.default === undefined) continue;
    defaults[name] =
      definition.type === 'file' && typeof definition.default === 'string'
        ? resolve(recipeDir, definition.default)
        : definition.default;
  }
  const overrides = input.sets?.length ? overridesFromSets(input.sets, definitions, input.cwd, probe, diagnostics) : {};
  const missing = (values: Row) => Object.keys(definitions).filter((name) => values[name] === undefined);
  if (input.batch) {
    const batchDir = dirname(resolve(input.cwd, input.batch.path));
    // Each row is checked as it is read; only the values of rows that pass are kept, in a table
    // that adds the defaults and overrides back to each row it gives.
    const rows = new RowTable(defaults, overrides);
    const before = { diagnostics: diagnostics.length, skipped: skipped.length };
    const batchFile = new SourceFile(input.batch.path, input.batch.text);
    origins.file = batchFile;
    // A CSV's columns are its header's: a column no input has, or a required input with no column,
    // is said once at the header, not once a row (a typo in a 5,000-row file's header gave 10,000 errors).
    let header: { unknown: Set<string>; absent: Set<string> } | undefined;
    const batch = readBatch(batchFile, (row) => {
      const problems: Diagnostic[] = [];
      if (row.problem) problems.push(error(batchFile, row.range, row.problem));
      if (row.raw && !header && !row.problem) {
        header = columnsAgainstInputs(Object.keys(row.values), definitions, { ...defaults, ...overrides });
        const at = batchFile.lineRange(1);
        for (const name of header.unknown) {
          // One column named `a;b;c` is a file split on another character (a spreadsheet's `;` export).
          const other = [';', '\t', '|'].find((c) => name.includes(c));
          const hint = other
            ? `; the header has no comma but ${other === '\t' ? 'tabs' : `'${other}'`}: a batch file's columns are separated by commas`
            : didYouMean(name, Object.keys(definitions));
          diagnostics.push(error(batchFile, at, `unknown input '${name}' in the batch file's header${hint}`));
        }
        for (const name of header.absent) {
          const hint = didYouMean(name, [...header.unknown]);
          diagnostics.push(
            error(batchFile, at, `input '${name}' is required and the batch file's header has no column for it${hint}`),
          );
        }
      }
      const ignored = row.raw ? header?.unknown : undefined;
      const own = batchValues(row, definitions, batchDir, batchFile, problems, ignored);
      if (!row.problem)
        for (const name of missing({ ...defaults, ...own, ...overrides }))
          if (!(row.raw && header?.absent.has(name)))
            problems.push(error(batchFile, row.range, `input '${name}' is required and this row does not give it`));
      // With --skip-invalid-rows a bad row is left out and listed; otherwise it is an error like any other.
      if (problems.length === 0) {
        rows.push(own);
        origins.add(row.range);
      } else for (const problem of problems) (input.skipInvalidRows ? skipped : diagnostics).push(problem);
    });
    if (batch.unreadable) {
      // A file that cannot be read to its end has no rows: what its first rows showed is forgotten.
      diagnostics.length = before.diagnostics;
      skipped.length = before.skipped;
      rows.clear();
      origins.clear();
    }
    // Loops, not push(...list): a list of one entry per row would overflow the stack as arguments.
    for (const diagnostic of batch.diagnostics) diagnostics.push(diagnostic);
    if (rows.length === 0 && skipped.length > 0) for (const problem of skipped) diagnostics.push(problem);
    return rows.trimmed();
  }
  const values = { ...defaults, ...overrides };
  for (const name of missing(values))
    diagnostics.push(
      error(file, file.locate(['inputs', name], 'key'), `input '${name}' is required: give it with --set ${name}=…`),
    );
  return [values];
}

/** The `--set` values, read as their inputs' types; a file is made absolute against the working folder. */
function overridesFromSets(
  sets: string[],
  definitions: Record<string, InputDefinition>,
  cwd: string,
  probe: FileProbe,
  diagnostics: Diagnostic[],
): Row {
  const overrides: Row = {};
  const { file: cli, entries } = setsSource(sets);
  for (const entry of entries) {
    const definition = definitionOf(definitions, entry.name);
    if (!definition) {
      const names = Object.keys(definitions);
      const hint = didYouMean(entry.name, names);
      const list = names.length
        ? `${hint ? ' The' : '; the'} inputs are ${names.join(', ')}`
        : '; the recipe has no inputs';
      diagnostics.push(error(cli, entry.nameRange, `unknown input '${entry.name}'${hint}${list}`));
      continue;
    }
    const coerced = coerce(definition.type, entry.text);
    const limit = coerced.ok ? givenValueProblem(coerced.value) : undefined;
    const problems = !coerced.ok ? [coerced.reason] : limit ? [limit] : checkValue(definition, coerced.value);
    // A value past a limit is reported and never read again: nothing else may recurse into it.
    if (limit) overrides[entry.name] = standIn(definition.type);
    else if (coerced.ok && definition.type === 'file') {
      const checked = checkFile(entry.text, cwd, probe);
      if (checked.problem)
        problems.push(checked.problem.replace(/^file /, 'names a file that is missing or too large: '));
      overrides[entry.name] = checked.absolute;
    } else if (coerced.ok) overrides[entry.name] = coerced.value;
    for (const problem of problems) diagnostics.push(error(cli, entry.valueRange, `input '${entry.name}' ${problem}`));
  }
  return overrides;
}

/** One batch row's values, read as their inputs' types (CSV cells are text); a file is made absolute against the batch file's folder. */
function batchValues(
  row: BatchRow,
  definitions: Record<string, InputDefinition>,
  batchDir: string,
  batchFile: SourceFile,
  diagnostics: Diagnostic[],
  /** Columns already said to be no input, at the header. */
  ignored?: ReadonlySet<string>,
): Row {
  const values: Row = {};
  for (const [name, raw] of Object.entries(row.values)) {
    if (ignored?.has(name)) continue;
    const definition = definitionOf(definitions, name);
    if (!definition) {
      const hint = didYouMean(name, Object.keys(definitions));
      diagnostics.push(error(batchFile, row.range, `unknown input '${name}' in the batch file${hint}`));
      continue;
    }
    if (raw === '' && row.raw) continue;
    const coerced = row.raw ? coerce(definition.type, String(raw)) : { ok: true as const, value: raw };
    const limit = coerced.ok ? givenValueProblem(coerced.value) : undefined;
    const problems = !coerced.ok ? [coerced.reason] : limit ? [limit] : checkValue(definition, coerced.value);
    for (const problem of problems) diagnostics.push(error(batchFile, row.range, `input '${name}' ${problem}`));
    // A value past a limit is reported and never read again: the row is refused for it.
    if (limit) values[name] = standIn(definition.type);
    else if (coerced.ok)
      values[name] =
        definition.type === 'file' && typeof coerced.value === 'string'
          ? resolve(batchDir, coerced.value)
          : coerced.value;
  }
  return values;
}

/** A CSV header's columns that are no input, and the required inputs it has no column for (nor a default or --set). */
function columnsAgainstInputs(
  columns: readonly string[],
  definitions: Record<string, InputDefinition>,
  given: Row,
): { unknown: Set<string>; absent: Set<string> } {
  // An unnamed column is said by the reader (readBatch).
  const unknown = new Set(columns.filter((name) => name !== '' && !definitionOf(definitions, name)));
  const present = new Set(columns);
  const absent = new Set(Object.keys(definitions).filter((name) => given[name] === undefined && !present.has(name)));
  return { unknown, absent };
}

/**
 * An empty value of an input's type, in place of one refused for passing an input limit: the
 * analysis goes on to find other problems without a second, misleading one about this input.
 */
function standIn(type: InputDefinition['type']): unknown {
  return type === 'array'
    ? []
    : type === 'object'
      ? {}
      : type === 'boolean'
        ? false
        : type === 'integer' || type === 'number'
          ? 0
          : '';
}

/** A name's own input definition: `__proto__` or `toString` given on the command line is no input. */
function definitionOf(definitions: Record<string, InputDefinition>, name: string): InputDefinition | undefined {
  return Object.hasOwn(definitions, name) ? definitions[name] : undefined;
}
