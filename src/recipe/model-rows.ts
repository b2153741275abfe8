import { fieldLabel } from '../model-schemas/validate.js';
import type { StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { FileProbe } from './inputs.js';
import type { SourceFile, SourceRange } from './source.js';
import { neverRunsInRow, stepInputProblems, type StepInputProblem } from './step-inputs.js';

type Row = Record<string, unknown>;

/**
 * Where each kept batch row stands in its file: two numbers a row, not an object, since a batch
 * may have a million rows.
 */
export class RowOrigins {
  file: SourceFile | undefined;
  private readonly bounds: number[] = [];

  add(range: SourceRange): void {
    this.bounds.push(range.start, range.end);
  }

  clear(): void {
    this.bounds.length = 0;
  }

  /** The file and range of the row at `index` of the kept rows. */
  of(index: number): { file: SourceFile; range: SourceRange } | undefined {
    const start = this.bounds[2 * index];
    const end = this.bounds[2 * index + 1];
    return this.file && start !== undefined && end !== undefined
      ? { file: this.file, range: { start, end } }
      : undefined;
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
  rows: Row[],
  origins: RowOrigins,
  recipe: SourceFile,
  where: { recipeDir: string; cwd: string; probe: FileProbe },
  reject: (problems: Diagnostic[]) => void,
): Row[] {
  const checked = drafts.filter((draft) => draft.inputSchema);
  return rows.filter((row, index) => {
    const origin = origins.of(index);
    if (!origin) throw new Error(`Internal error: batch row ${index} has no place in its file`);
    const problems = checked.flatMap((draft) =>
      (neverRunsInRow(draft, row) ? [] : stepInputProblems(draft, row, where.recipeDir, where.cwd, where.probe))
        .filter((problem) => problem.fromInputs.length > 0)
        .map((problem) => error(origin.file, origin.range, rowProblemMessage(problem, recipe))),
    );
    if (problems.length > 0) reject(problems);
    return problems.length === 0;
  });
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
