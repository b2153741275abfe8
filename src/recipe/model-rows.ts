import { fieldLabel } from '../model-schemas/validate.js';
import type { StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { FileProbe } from './inputs.js';
import type { RowTable } from './row-table.js';
import type { SourceFile, SourceRange } from './source.js';
import { neverRunsInRow, stepInputProblems, type StepInputProblem } from './step-inputs.js';

/**
 * Where each kept batch row stands in its file: two 32-bit offsets a row in one typed array, not
 * an object nor a list of numbers (8 bytes each, grown by half again), since a batch may have a
 * million rows. A JavaScript string, and so a batch file's text, is far shorter than 4 GiB.
 */
export class RowOrigins {
  file: SourceFile | undefined;
  private bounds = new Uint32Array(2 * 1024);
  private length = 0;

  add(range: SourceRange): void {
    if (this.length + 2 > this.bounds.length) {
      const grown = new Uint32Array(this.bounds.length * 2);
      grown.set(this.bounds);
      this.bounds = grown;
    }
    this.bounds[this.length++] = range.start;
    this.bounds[this.length++] = range.end;
  }

  clear(): void {
    this.length = 0;
  }

  /** The file and range of the row at `index` of the kept rows. */
  of(index: number): { file: SourceFile; range: SourceRange } | undefined {
    if (!this.file || 2 * index + 1 >= this.length) return undefined;
    return { file: this.file, range: { start: this.bounds[2 * index]!, end: this.bounds[2 * index + 1]! } };
  }
}

/**
 * The batch rows whose values every step accepts. A row can pass the recipe's input types and
 * still give a model a value its schema rejects (an enum, a length, a range); each such problem is
 * handed to `reject` as a diagnostic at the row, naming the recipe field the value feeds. Problems
 * the recipe causes on its own (a literal out of range) are no row's fault: planning reports them.
 * A step the row never runs (its `if` false) judges nothing.
 */
export function rowsStepsAccept(
  drafts: StepDraft[],
  rows: RowTable,
  origins: RowOrigins,
  recipe: SourceFile,
  where: { recipeDir: string; cwd: string; probe: FileProbe },
  reject: (problems: Diagnostic[]) => void,
): RowTable {
  const checked = drafts.filter((draft) => draft.inputSchema);
  if (checked.length === 0) return rows;
  // The rows themselves when every one is accepted (the usual case): no second table of a million.
  const rejected = new Set<number>();
  for (const [index, row] of rows.entries()) {
    const problems: StepInputProblem[] = [];
    for (const draft of checked) {
      if (neverRunsInRow(draft, row)) continue;
      for (const problem of stepInputProblems(draft, row, where.recipeDir, where.cwd, where.probe))
        if (problem.fromInputs.length > 0) problems.push(problem);
    }
    if (problems.length === 0) continue;
    rejected.add(index);
    const origin = origins.of(index);
    if (!origin) throw new Error(`Internal error: batch row ${index} has no place in its file`);
    reject(problems.map((problem) => error(origin.file, origin.range, rowProblemMessage(problem, recipe))));
  }
  return rejected.size === 0 ? rows : rows.without(rejected);
}

/** `input 'ratio' gives steps.a.with.aspect_ratio (recipe.yaml:9:21) a value m/x rejects: …`. */
function rowProblemMessage(problem: StepInputProblem, recipe: SourceFile): string {
  const one = problem.fromInputs.length === 1;
  const names = problem.fromInputs.map((name) => `'${name}'`).join(', ');
  const { line, col } = recipe.position(recipe.locate(problem.path, problem.which).start);
  const field = `${fieldLabel(problem.path)} (${recipe.path}:${line}:${col})`;
  const gives = `input${one ? '' : 's'} ${names} ${one ? 'gives' : 'give'} ${field}`;
  if (!problem.model) return `${gives}: ${problem.message}`;
  return `${gives} a value ${problem.model.slug} rejects: ${problem.model.field} ${problem.model.problem}`;
}
