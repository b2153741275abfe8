import { dirname, resolve } from 'node:path';
import { NameSuggester } from '../expressions/expressions.js';
import type { JsonSchema } from '../model-schemas/bundled.js';
import type { Plan, PlannedStep, StepId, ValueTemplate } from '../plan.js';
import { err, ok, type Result } from '../result.js';
import type { AnalyzerDeps, AnalyzerInput, RawRecipe, StepDraft } from './analyzer-types.js';
import { error, sortDiagnostics, type Diagnostic } from './diagnostics.js';
import { checkInputDefinitions, resolveRows } from './input-rows.js';
import { UPLOAD_LIMIT_BYTES } from '../wire/limits.js';
import type { FileProbe, InputDefinition } from './inputs.js';
import { RowOrigins, rowsStepsAccept } from './model-rows.js';
import { planStep } from './plan-steps.js';
import { ifFalseInRow } from './step-inputs.js';
import { RowTable } from './row-table.js';
import { checkStructure } from './recipe-schema.js';
import { resolveSettings } from './settings.js';
import { ANY, BOOLEAN, INTEGER, list, NUMBER, object, STRING, type Shape, withValues } from './shapes.js';
import { parseRecipeYaml, type SourceFile } from './source.js';
import { draftStep } from './step-draft.js';
import { topologicalOrder } from './step-order.js';
import { checkStepExpressions, valueShape } from './step-shapes.js';
import { compileValue, type Reference, type TypeScope } from './templates.js';
import { countThroughChains } from './item-counts.js';
import { checkChosenItemsExist, chosenItemReads, itemLineages } from './lineage.js';
import { checkIfsThatNeverHold } from './never-holds.js';

export type { AnalyzerDeps, AnalyzerInput } from './analyzer-types.js';

const INPUT_SHAPES: Record<InputDefinition['type'], Shape> = {
  string: STRING,
  file: STRING,
  integer: INTEGER,
  number: NUMBER,
  boolean: BOOLEAN,
  array: list(ANY),
  object: object({}, true),
};

/**
 * Turns recipe text (and its inputs) into a valid plan, or every diagnostic it can find: the YAML,
 * then the recipe schema, then each step, the order of the steps, their expressions and their
 * inputs for every row.
 */
export function analyze(input: AnalyzerInput, deps: AnalyzerDeps): Result<Plan, Diagnostic[]> {
  const { source: file, value, problems } = parseRecipeYaml(input.path, input.text);
  if (problems.length > 0) return err(problems.map((p) => error(file, p.range, p.message)));
  const structural = checkStructure(value, file, deps.schemas.recipe);
  if (structural.length > 0) return err(sortDiagnostics(structural));
  const recipe = value as RawRecipe;
  const diagnostics: Diagnostic[] = [];
  const recipeDir = dirname(resolve(input.cwd, input.path));

  const probes = fileProbes(deps.probe);
  const definitions = checkInputDefinitions(recipe, file, recipeDir, input.cwd, probes.inputs, diagnostics);
  const skipped: Diagnostic[] = [];
  const origins = new RowOrigins();
  const inputRows = resolveRows(
    recipe,
    definitions,
    input,
    file,
    recipeDir,
    probes.inputs,
    diagnostics,
    skipped,
    origins,
  );
  const modelSchema = onceEach(deps.modelSchema);
  const draftDeps = { ...deps, modelSchema };
  // Loops rather than entries and pairs: each of these runs once per step.
  const drafts: StepDraft[] = [];
  for (const id of Object.keys(recipe.steps))
    drafts.push(draftStep(id, recipe.steps[id]!, file, draftDeps, diagnostics));
  const byId = new Map<string, StepDraft>();
  for (const draft of drafts) byId.set(draft.id, draft);
  // One suggester for every unknown step name, so that their suggestions together stay linear.
  const names = { steps: new NameSuggester(byId.keys()), inputs: new NameSuggester(Object.keys(definitions)) };
  checkNeeds(drafts, byId, names.steps, file, diagnostics);
  const order = topologicalOrder(drafts, byId, file, diagnostics);

  // A step's output shape follows from its action alone, so every step can be checked, cycle or not.
  const inputShapes = Object.fromEntries(
    // Every row's value is checked against the input's enum before the run, so it is one of them
    // (but a file's, which expressions read as the absolute path it resolves to).
    Object.entries(definitions).map(([name, d]) => {
      const shape = INPUT_SHAPES[d.type] ?? ANY;
      return [name, d.type === 'file' ? shape : withValues(shape, d.enum)];
    }),
  );
  const outputShapes = new Map<string, Shape>();
  for (const d of drafts) outputShapes.set(d.id, d.forEach ? list(d.outputs) : d.outputs);
  const settings = resolveSettings(recipe, file, diagnostics, modelSchema);
  const lineages = itemLineages(drafts, outputShapes, settings.itemFlow, file, diagnostics);
  const chosenItems = chosenItemReads(drafts, lineages, settings.itemFlow);
  const scope = { inputs: inputShapes, steps: outputShapes, names };
  for (const draft of drafts) checkStepExpressions(draft, scope, file, diagnostics, lineages.get(draft.id)?.perItem);
  checkIfsThatNeverHold(drafts, byId, file, diagnostics);
  const outputs = compileOutputs(recipe, scope, file, diagnostics);
  // After the expressions' checks: an expression with an error of its own is then not worked out
  // for each row, to report again what it gave (a null for an unknown input) as the row's fault.
  const rows =
    inputRows instanceof RowTable
      ? judgeBatchRows(drafts, inputRows, origins, input, file, probes.steps, diagnostics, skipped)
      : inputRows;

  // With a cycle there is no order, but every step's inputs can still be checked.
  const steps = (order ?? drafts).map((draft) => {
    const step = planStep(draft, byId, rows, settings, file, recipeDir, input.cwd, probes.steps, diagnostics);
    const lineage = lineages.get(draft.id);
    const chosen = chosenItems.get(draft.id);
    if (lineage) step.itemsFrom = lineage;
    if (chosen) step.chosenItems = chosen;
    return step;
  });
  if (order) {
    countThroughChains(steps, rows);
    const ifFalse = (step: string, row: number) => {
      const values = rows.at(row);
      return values !== undefined && ifFalseInRow(byId.get(step)!, values);
    };
    checkChosenItemsExist(drafts, new Map(steps.map((s) => [s.id, s.runs])), ifFalse, file, diagnostics);
  }
  if (!order || diagnostics.length > 0) return err(sortDiagnostics(dedupe(diagnostics)));
  return ok({
    state: 'valid',
    name: recipe.name,
    ...(recipe.description ? { description: recipe.description } : {}),
    recipePath: resolve(input.cwd, input.path),
    recipeDir,
    rows,
    ...(skipped.length > 0 ? { skippedRows: sortDiagnostics(skipped).map(skippedRow) } : {}),
    settings,
    steps,
    layers: assignLayers(steps),
    outputs,
  });
}

/**
 * The batch rows whose values the steps' models accept; each rejected row's problems are errors,
 * or with --skip-invalid-rows listed with the rows left out (errors again when none is left).
 */
function judgeBatchRows(
  drafts: StepDraft[],
  rows: RowTable,
  origins: RowOrigins,
  input: AnalyzerInput,
  file: SourceFile,
  probe: FileProbe,
  diagnostics: Diagnostic[],
  skipped: Diagnostic[],
): RowTable {
  const where = { recipeDir: dirname(resolve(input.cwd, input.path)), cwd: input.cwd, probe };
  const kept = rowsStepsAccept(drafts, rows, origins, file, where, (problems) => {
    for (const problem of problems) (input.skipInvalidRows ? skipped : diagnostics).push(problem);
  });
  // A loop, not push(...skipped): one entry per row would overflow the stack as arguments.
  if (kept.length === 0 && rows.length > 0 && skipped.length > 0)
    for (const problem of skipped) diagnostics.push(problem);
  return kept;
}

/**
 * The file system as the input checks see it, and as the steps' checks do: a file an input names
 * (its default, or `--set`) is reported where the input is given, once. A step that uses the input
 * sees it as present, rather than report the same file again at its own line.
 */
function fileProbes(probe: FileProbe): { inputs: FileProbe; steps: FileProbe } {
  const reported = new Set<string>();
  return {
    inputs: (path) => {
      const found = probe(path);
      if (!found || found.folder || found.size > UPLOAD_LIMIT_BYTES) reported.add(path);
      return found;
    },
    steps: (path, use) => (reported.has(path) ? { size: 0 } : probe(path, use)),
  };
}

/** One lookup per model, however many steps use it. */
function onceEach(lookup: (slug: string) => JsonSchema | undefined): (slug: string) => JsonSchema | undefined {
  const known = new Map<string, JsonSchema | undefined>();
  return (slug) => {
    if (!known.has(slug)) known.set(slug, lookup(slug));
    return known.get(slug);
  };
}

function checkNeeds(
  drafts: StepDraft[],
  byId: Map<string, StepDraft>,
  stepNames: NameSuggester,
  file: SourceFile,
  diagnostics: Diagnostic[],
): void {
  for (const draft of drafts) {
    for (const need of draft.needs) {
      if (need.step === draft.id)
        diagnostics.push(error(file, file.locate(need.path), `step '${draft.id}' cannot need itself`));
      else if (!byId.has(need.step)) {
        const hint = stepNames.hint(need.step, draft.id);
        diagnostics.push(error(file, file.locate(need.path), `unknown step '${need.step}' in needs${hint}`));
      }
    }
  }
}

/** The recipe's `outputs:`, compiled and checked like a step's values (with no `item`). */
function compileOutputs(
  recipe: RawRecipe,
  scope: TypeScope,
  file: SourceFile,
  diagnostics: Diagnostic[],
): Record<string, ValueTemplate> {
  const outputs: Record<string, ValueTemplate> = {};
  for (const [name, text] of Object.entries(recipe.outputs ?? {})) {
    const references: Reference[] = [];
    const compiled = compileValue(text, ['outputs', name], file, diagnostics, references);
    valueShape(compiled, ['outputs', name], scope, file, diagnostics);
    outputs[name] = compiled;
  }
  return outputs;
}

/** Each step's layer (one past its deepest dependency's), and the steps of each layer. */
function assignLayers(steps: PlannedStep[]): StepId[][] {
  // In topological order every dependency's layer is already known.
  const layerOf = new Map<string, number>();
  for (const step of steps) {
    step.layer = step.dependsOn.reduce((deepest, dep) => Math.max(deepest, (layerOf.get(dep) ?? 0) + 1), 0);
    layerOf.set(step.id, step.layer);
  }
  const layers: StepId[][] = [];
  for (const step of steps) {
    layers[step.layer] ??= [];
    layers[step.layer]!.push(step.id);
  }
  return layers;
}

/** The same message at the same place once: several rows can find the same problem. */
function dedupe(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.file.path}:${d.range.start}:${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A batch row left out by --skip-invalid-rows, as the run lists it. */
function skippedRow(diagnostic: Diagnostic): { where: string; message: string } {
  const { line, col } = diagnostic.file.position(diagnostic.range.start);
  return { where: `${diagnostic.file.path}:${line}:${col}`, message: diagnostic.message };
}
