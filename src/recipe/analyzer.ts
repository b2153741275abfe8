import { dirname, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { MODEL_SLUG, type JsonSchema, type RecipeLanguageSchemas } from '../model-schemas/bundled.js';
import { isLocalPath, mediaFields as mediaFieldsOf, validateModelInput } from '../model-schemas/validate.js';
import { parseDuration } from '../duration.js';
import type { MediaField, Plan, PlannedStep, PlanSettings, StepId, ValueTemplate } from '../plan.js';
import { err, ok, type Result } from '../result.js';
import { actionInputs, actionOutputs, BUILTIN_ACTIONS, MODEL_OUTPUTS, RUN_OUTPUTS, type BuiltinAction } from './actions.js';
import { error, sortDiagnostics, type Diagnostic } from './diagnostics.js';
import { checkFile, checkValue, coerce, readBatch, setsSource, type FileProbe, type InputDefinition } from './inputs.js';
import { ExpressionError, isUnknownAt, knownValue, UNKNOWN } from './known-values.js';
import { checkStructure, label } from './recipe-schema.js';
import { ANY, BOOLEAN, describeShape, INTEGER, list, NUMBER, object, STRING, type Shape } from './shapes.js';
import { parseRecipeYaml, type PathPart, type SourceFile } from './source.js';
import { checkTemplate, compileValue, templateStrings, type Reference, type TypeScope } from './templates.js';

export interface AnalyzerInput {
  path: string;
  text: string;
  /** `name=value` pairs from `--set`. */
  sets?: string[];
  batch?: { path: string; text: string };
  /** Where `--set` file paths are relative to. */
  cwd: string;
}

/** The analyzer's window on the world: it does no I/O of its own. */
export interface AnalyzerDeps {
  /** A model's request schema, or undefined for an unknown model. */
  modelSchema: (slug: string) => JsonSchema | undefined;
  /** The recipe's own JSON Schema and the tools' request schemas, as the package ships them. */
  schemas: RecipeLanguageSchemas;
  probe: FileProbe;
}

interface RawStep {
  uses?: string;
  with?: Record<string, unknown>;
  run?: string | string[];
  needs?: string | string[];
  for_each?: string | unknown[];
  if?: string | boolean;
  retry?: { attempts?: number; backoff?: string | number };
  timeout?: string | number;
  continue_on_error?: boolean;
}

interface RawRecipe {
  version: 1;
  name: string;
  description?: string;
  inputs?: Record<string, InputDefinition>;
  settings?: { concurrency?: number; rpm?: 'auto' | number; retries?: number; timeout?: string | number; poll?: string | number };
  steps: Record<string, RawStep>;
  outputs?: Record<string, string>;
}

const INPUT_SHAPES: Record<InputDefinition['type'], Shape> = { string: STRING, file: STRING, integer: INTEGER, number: NUMBER, boolean: BOOLEAN, array: list(ANY), object: object({}, true) };
const DEFAULTS = { concurrency: 4, retries: 2, timeoutMs: 30 * 60_000, pollMs: 15_000, backoffMs: 5_000 };
const ajv = new Ajv({ strict: false });

/** Everything about one step that the later passes need. */
interface StepDraft {
  id: string;
  raw: RawStep;
  action: PlannedStep['action'];
  model?: { slug: string; type: string };
  inputSchema?: JsonSchema;
  with: ValueTemplate;
  run?: ValueTemplate;
  forEach?: ValueTemplate;
  if?: ValueTemplate;
  references: Reference[];
  needs: Array<{ step: string; path: PathPart[] }>;
  mediaFields: MediaField[];
  outputs: Shape;
  /** Its for_each was already reported as not a list. */
  forEachReported?: boolean;
}

/** Turns recipe text (and its inputs) into a valid plan, or every diagnostic it can find. */
export function analyze(input: AnalyzerInput, deps: AnalyzerDeps): Result<Plan, Diagnostic[]> {
  const { source: file, value, problems } = parseRecipeYaml(input.path, input.text);
  if (problems.length > 0) return err(problems.map((p) => error(file, p.range, p.message)));
  const structural = checkStructure(value, file, deps.schemas.recipe);
  if (structural.length > 0) return err(sortDiagnostics(structural));
  const recipe = value as RawRecipe;
  const diagnostics: Diagnostic[] = [];
  const recipeDir = dirname(resolve(input.cwd, input.path));

  const definitions = checkInputDefinitions(recipe, file, recipeDir, input.cwd, deps.probe, diagnostics);
  const rows = resolveRows(recipe, definitions, input, file, recipeDir, deps.probe, diagnostics);
  // One lookup per model, however many steps use it.
  const schemas = new Map<string, JsonSchema | undefined>();
  const modelSchema = (slug: string) => (schemas.has(slug) ? schemas.get(slug) : schemas.set(slug, deps.modelSchema(slug)).get(slug));
  const drafts = Object.entries(recipe.steps).map(([id, raw]) => draftStep(id, raw, file, { ...deps, modelSchema }, diagnostics));
  const byId = new Map(drafts.map((d) => [d.id, d]));
  for (const draft of drafts) {
    for (const need of draft.needs) {
      if (need.step === draft.id) diagnostics.push(error(file, file.locate(need.path), `step '${draft.id}' cannot need itself`));
      else if (!byId.has(need.step)) diagnostics.push(error(file, file.locate(need.path), `unknown step '${need.step}' in needs`));
    }
  }
  const order = topologicalOrder(drafts, byId, file, diagnostics);

  // A step's output shape follows from its action alone, so every step can be checked, cycle or not.
  const inputShapes = Object.fromEntries(Object.entries(definitions).map(([name, d]) => [name, INPUT_SHAPES[d.type] ?? ANY]));
  const outputShapes = new Map(drafts.map((d) => [d.id, d.forEach ? list(d.outputs) : d.outputs]));
  for (const draft of drafts) checkStepExpressions(draft, inputShapes, outputShapes, file, diagnostics);

  const outputs: Record<string, ValueTemplate> = {};
  for (const [name, text] of Object.entries(recipe.outputs ?? {})) {
    const references: Reference[] = [];
    outputs[name] = compileValue(text, ['outputs', name], file, diagnostics, references);
    valueShape(outputs[name]!, ['outputs', name], { inputs: inputShapes, steps: outputShapes }, file, diagnostics);
  }

  const settings = resolveSettings(recipe, file, diagnostics);
  // With a cycle there is no order, but every step's inputs can still be checked.
  const steps = (order ?? drafts).map((draft) => planStep(draft, byId, rows, settings, file, recipeDir, input.cwd, deps.probe, diagnostics));
  if (!order || diagnostics.length > 0) return err(sortDiagnostics(dedupe(diagnostics)));
  // In topological order every dependency's layer is already known.
  const layerOf = new Map<string, number>();
  for (const step of steps) {
    step.layer = step.dependsOn.reduce((deepest, dep) => Math.max(deepest, (layerOf.get(dep) ?? 0) + 1), 0);
    layerOf.set(step.id, step.layer);
  }
  const layers: StepId[][] = [];
  for (const step of steps) (layers[step.layer] ??= []).push(step.id);
  return ok({
    state: 'valid',
    name: recipe.name,
    ...(recipe.description ? { description: recipe.description } : {}),
    recipePath: resolve(input.cwd, input.path),
    recipeDir,
    rows,
    settings,
    steps,
    layers,
    outputs,
  });
}

function checkStepExpressions(draft: StepDraft, inputShapes: Record<string, Shape>, outputShapes: Map<string, Shape>, file: SourceFile, diagnostics: Diagnostic[]): void {
  const stepPath: PathPart[] = ['steps', draft.id];
  const scope: TypeScope = { inputs: inputShapes, steps: outputShapes, self: draft.id };
  let item: Shape | undefined;
  if (draft.forEach) {
    const listShape = valueShape(draft.forEach, [...stepPath, 'for_each'], scope, file, diagnostics);
    if (listShape.kind === 'list') item = listShape.items;
    else {
      if (listShape.kind !== 'any') {
        diagnostics.push(error(file, file.locate([...stepPath, 'for_each']), `for_each must give a list, but this is ${describeShape(listShape)}`));
        draft.forEachReported = true;
      }
      item = ANY;
    }
  }
  if (draft.if) valueShape(draft.if, [...stepPath, 'if'], scope, file, diagnostics);
  const inner: TypeScope = item ? { ...scope, item } : scope;
  const fieldShapes = new Map<string, Shape>();
  if (draft.with.kind === 'map') {
    for (const [field, fieldValue] of Object.entries(draft.with.entries)) fieldShapes.set(field, valueShape(fieldValue, [...stepPath, 'with', field], inner, file, diagnostics));
  }
  if (draft.run) valueShape(draft.run, [...stepPath, 'run'], inner, file, diagnostics);
  if (draft.inputSchema) checkFieldShapes(draft, fieldShapes, file, diagnostics);
}

function dedupe(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.file.path}:${d.range.start}:${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function valueShape(value: ValueTemplate, path: PathPart[], scope: TypeScope, file: SourceFile, diagnostics: Diagnostic[]): Shape {
  if (value.kind === 'template') return checkTemplate(value.template, path, scope, file, diagnostics);
  for (const inner of templateStrings(value, path)) checkTemplate(inner.template, inner.path, scope, file, diagnostics);
  if (value.kind === 'list') return list(ANY);
  if (value.kind === 'map') return object({}, true);
  const literal = value.value;
  return typeof literal === 'string' ? STRING : typeof literal === 'number' ? NUMBER : typeof literal === 'boolean' ? BOOLEAN : ANY;
}

function checkInputDefinitions(recipe: RawRecipe, file: SourceFile, recipeDir: string, cwd: string, probe: FileProbe, diagnostics: Diagnostic[]): Record<string, InputDefinition> {
  const definitions = recipe.inputs ?? {};
  for (const [name, definition] of Object.entries(definitions)) {
    if (definition.default === undefined) continue;
    const path = ['inputs', name, 'default'];
    for (const problem of checkValue(definition, definition.default)) diagnostics.push(error(file, file.locate(path), `the default of input '${name}' ${problem}`));
    if (definition.type === 'file' && typeof definition.default === 'string') {
      const checked = checkFile(definition.default, recipeDir, probe, cwd);
      if (checked.problem) diagnostics.push(error(file, file.locate(path), checked.problem));
    }
  }
  return definitions;
}

/** One input set per run: defaults, then the batch row, then `--set`, each checked against its definition. */
function resolveRows(recipe: RawRecipe, definitions: Record<string, InputDefinition>, input: AnalyzerInput, file: SourceFile, recipeDir: string, probe: FileProbe, diagnostics: Diagnostic[]): Array<Record<string, unknown>> {
  const defaults: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(definitions)) {
    if (definition.default === undefined) continue;
    defaults[name] = definition.type === 'file' && typeof definition.default === 'string' ? resolve(recipeDir, definition.default) : definition.default;
  }
  const overrides: Record<string, unknown> = {};
  if (input.sets?.length) {
    const { file: cli, entries } = setsSource(input.sets);
    for (const entry of entries) {
      const definition = definitionOf(definitions, entry.name);
      if (!definition) {
        diagnostics.push(error(cli, entry.nameRange, `unknown input '${entry.name}'${Object.keys(definitions).length ? `; the inputs are ${Object.keys(definitions).join(', ')}` : '; the recipe has no inputs'}`));
        continue;
      }
      const coerced = coerce(definition.type, entry.text);
      const problems = coerced.ok ? checkValue(definition, coerced.value) : [coerced.reason];
      if (coerced.ok && definition.type === 'file') {
        const checked = checkFile(entry.text, input.cwd, probe);
        if (checked.problem) problems.push(checked.problem.replace(/^file /, 'names a file that is missing or too large: '));
        overrides[entry.name] = checked.absolute;
      } else if (coerced.ok) overrides[entry.name] = coerced.value;
      for (const problem of problems) diagnostics.push(error(cli, entry.valueRange, `input '${entry.name}' ${problem}`));
    }
  }
  const rows: Array<Record<string, unknown>> = [];
  const missing = (values: Record<string, unknown>) => Object.keys(definitions).filter((name) => values[name] === undefined);
  if (input.batch) {
    const batch = readBatch(input.batch.path, input.batch.text);
    diagnostics.push(...batch.diagnostics);
    for (const row of batch.rows) {
      const values: Record<string, unknown> = { ...defaults };
      for (const [name, raw] of Object.entries(row.values)) {
        const definition = definitionOf(definitions, name);
        if (!definition) {
          diagnostics.push(error(batch.file, row.range, `unknown input '${name}' in the batch file`));
          continue;
        }
        if (raw === '' && row.raw) continue;
        const coerced = row.raw ? coerce(definition.type, String(raw)) : { ok: true as const, value: raw };
        const problems = coerced.ok ? checkValue(definition, coerced.value) : [coerced.reason];
        for (const problem of problems) diagnostics.push(error(batch.file, row.range, `input '${name}' ${problem}`));
        if (coerced.ok) values[name] = definition.type === 'file' && typeof coerced.value === 'string' ? resolve(dirname(resolve(input.cwd, input.batch.path)), coerced.value) : coerced.value;
      }
      Object.assign(values, overrides);
      for (const name of missing(values)) diagnostics.push(error(batch.file, row.range, `input '${name}' is required and this row does not give it`));
      rows.push(values);
    }
  } else {
    const values = { ...defaults, ...overrides };
    for (const name of missing(values)) diagnostics.push(error(file, file.locate(['inputs', name], 'key'), `input '${name}' is required: give it with --set ${name}=…`));
    rows.push(values);
  }
  return rows;
}

/** A name's own input definition: `__proto__` or `toString` given on the command line is no input. */
function definitionOf(definitions: Record<string, InputDefinition>, name: string): InputDefinition | undefined {
  return Object.hasOwn(definitions, name) ? definitions[name] : undefined;
}

function draftStep(id: string, raw: RawStep, file: SourceFile, deps: AnalyzerDeps, diagnostics: Diagnostic[]): StepDraft {
  const path: PathPart[] = ['steps', id];
  const references: Reference[] = [];
  const compile = (value: unknown, at: PathPart[]) => compileValue(value, at, file, diagnostics, references);
  let action: PlannedStep['action'] = 'run';
  let model: StepDraft['model'];
  let inputSchema: JsonSchema | undefined;
  let outputs: Shape = RUN_OUTPUTS;
  let mediaFields: MediaField[] = [];
  if (raw.uses !== undefined) {
    if ((BUILTIN_ACTIONS as readonly string[]).includes(raw.uses)) {
      action = raw.uses as BuiltinAction;
      inputSchema = actionInputs(deps.schemas.tools)[raw.uses as BuiltinAction];
      const schemaValue = raw.with?.schema;
      outputs = actionOutputs(raw.uses as BuiltinAction, raw.uses === 'llm' ? schemaValue : undefined);
      if (raw.uses === 'llm' && schemaValue !== undefined) {
        try {
          ajv.compile(schemaValue as object);
        } catch (cause) {
          const reason = (cause as Error).message.replace(/^schema is invalid: /, '').replace(/\bdata\//g, '');
          diagnostics.push(error(file, file.locate([...path, 'with', 'schema']), `schema is not a valid JSON Schema: ${reason}`));
        }
      }
    } else if (MODEL_SLUG.test(raw.uses)) {
      const schema = deps.modelSchema(raw.uses);
      action = 'model';
      outputs = MODEL_OUTPUTS;
      if (!schema) diagnostics.push(error(file, file.locate([...path, 'uses']), `unknown model '${raw.uses}': no schema for it from the gateway or in schemas/models/`));
      else {
        inputSchema = schema;
        const meta = schema['x-model'] as { type?: string } | undefined;
        model = { slug: raw.uses, type: meta?.type ?? 'unknown' };
        mediaFields = mediaFieldsOf(schema);
      }
    } else {
      diagnostics.push(error(file, file.locate([...path, 'uses']), `uses must be ${BUILTIN_ACTIONS.join(', ')} or a model slug provider/model_id (got ${JSON.stringify(raw.uses)})`));
    }
  }
  if (raw.uses === undefined && raw.with !== undefined) diagnostics.push(error(file, file.locate([...path, 'with'], 'key'), 'with gives inputs to an action; a run step has none'));
  if (raw.uses === 'upload') mediaFields = [{ field: 'path', media: 'any', list: false }];
  const needsList = raw.needs === undefined ? [] : Array.isArray(raw.needs) ? raw.needs : [raw.needs];
  const needs = needsList.map((step, i) => ({ step, path: Array.isArray(raw.needs) ? [...path, 'needs', i] : [...path, 'needs'] }));
  return {
    id,
    raw,
    action,
    ...(model ? { model } : {}),
    ...(inputSchema ? { inputSchema } : {}),
    with: compile(raw.with ?? {}, [...path, 'with']),
    ...(raw.run !== undefined ? { run: compile(raw.run, [...path, 'run']) } : {}),
    ...(raw.for_each !== undefined ? { forEach: compile(raw.for_each, [...path, 'for_each']) } : {}),
    ...(raw.if !== undefined ? { if: compile(raw.if, [...path, 'if']) } : {}),
    references,
    needs,
    mediaFields,
    outputs,
  };
}

interface Edge {
  to: string;
  kind: 'refers' | 'needs';
  path: PathPart[];
}

const describeEdge = (edge: Edge) => (edge.kind === 'refers' ? `${label(edge.path)} refers to steps.${edge.to}` : `${label(edge.path)} names ${edge.to}`);

/**
 * Kahn's algorithm, taking ready steps in file order (a heap of file positions keeps it
 * O(E + V log V)); a cycle is reported with each of its edges and where it is written.
 */
function topologicalOrder(drafts: StepDraft[], byId: Map<string, StepDraft>, file: SourceFile, diagnostics: Diagnostic[]): StepDraft[] | undefined {
  const edges = new Map<string, Edge[]>();
  for (const draft of drafts) {
    const out: Edge[] = [];
    for (const ref of draft.references) if (byId.has(ref.step) && ref.step !== draft.id) out.push({ to: ref.step, kind: 'refers', path: ref.path });
    for (const need of draft.needs) if (byId.has(need.step) && need.step !== draft.id) out.push({ to: need.step, kind: 'needs', path: need.path });
    edges.set(draft.id, out);
  }
  const position = new Map(drafts.map((d, i) => [d.id, i]));
  const remaining = new Map(drafts.map((d) => [d.id, new Set((edges.get(d.id) ?? []).map((e) => e.to)).size]));
  const dependants = new Map<string, string[]>();
  for (const [from, out] of edges) {
    for (const to of new Set(out.map((e) => e.to))) {
      const list = dependants.get(to);
      if (list) list.push(from);
      else dependants.set(to, [from]);
    }
  }
  const ready = new MinHeap();
  for (const draft of drafts) if (remaining.get(draft.id) === 0) ready.push(position.get(draft.id)!);
  const order: StepDraft[] = [];
  while (ready.size > 0) {
    const draft = drafts[ready.pop()]!;
    order.push(draft);
    for (const next of dependants.get(draft.id) ?? []) {
      const left = remaining.get(next)! - 1;
      remaining.set(next, left);
      if (left === 0) ready.push(position.get(next)!);
    }
  }
  if (order.length === drafts.length) return order;
  // Every step left waits on a cycle or on a step in one; walk from each to find its cycle.
  const done = new Set(order.map((d) => d.id));
  const stuck = new Set(drafts.filter((d) => !done.has(d.id)).map((d) => d.id));
  const reported = new Set<string>();
  for (const start of stuck) {
    const trail: string[] = [];
    let current = start;
    while (!trail.includes(current)) {
      trail.push(current);
      current = (edges.get(current) ?? []).find((e) => stuck.has(e.to))!.to;
    }
    const cycle = trail.slice(trail.indexOf(current));
    const key = [...cycle].sort().join(',');
    if (reported.has(key)) continue;
    reported.add(key);
    const links = cycle.map((from, i) => (edges.get(from) ?? []).find((e) => e.to === cycle[(i + 1) % cycle.length])!);
    const described = links.map((link, i) => `${cycle[i]} → ${link.to} (${describeEdge(link)})`).join(', ');
    diagnostics.push(error(file, file.locateWithin(links[0]!.path, `steps.${links[0]!.to}`), `the steps form a cycle: ${described}`));
  }
  return undefined;
}

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(value: number): void {
    const items = this.items;
    items.push(value);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= value) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= items.length) break;
        const child = left + 1 < items.length && items[left + 1]! < items[left]! ? left + 1 : left;
        if (items[child]! >= last) break;
        items[i] = items[child]!;
        i = child;
      }
      items[i] = last;
    }
    return top;
  }
}

/** A whole-expression field whose shape the model's schema cannot take: caught before anything runs. */
function checkFieldShapes(draft: StepDraft, shapes: Map<string, Shape>, file: SourceFile, diagnostics: Diagnostic[]): void {
  const properties = (draft.inputSchema?.properties ?? {}) as Record<string, { type?: string }>;
  for (const [field, shape] of shapes) {
    const type = properties[field]?.type;
    if (!type || shape.kind === 'any') continue;
    const fits =
      type === 'string' ? shape.kind === 'string' || shape.kind === 'number' || shape.kind === 'integer' || shape.kind === 'boolean' : type === 'array' ? shape.kind === 'list' : type === 'integer' || type === 'number' ? shape.kind === 'integer' || shape.kind === 'number' : type === 'boolean' ? shape.kind === 'boolean' : type === 'object' ? shape.kind === 'object' : true;
    if (!fits) diagnostics.push(error(file, file.locate(['steps', draft.id, 'with', field]), `${field} takes ${type === 'array' ? 'a list' : type === 'string' ? 'text' : type === 'object' ? 'an object' : `a ${type}`}, but this gives ${describeShape(shape)}`));
  }
}

function resolveSettings(recipe: RawRecipe, file: SourceFile, diagnostics: Diagnostic[]): PlanSettings {
  const settings = recipe.settings ?? {};
  const duration = (key: 'timeout' | 'poll', fallback: number) => {
    const raw = settings[key];
    if (raw === undefined) return fallback;
    const ms = parseDuration(raw);
    if (ms === undefined) diagnostics.push(error(file, file.locate(['settings', key]), `settings.${key} must be a duration such as 90s or 15m`));
    return ms ?? fallback;
  };
  return { concurrency: settings.concurrency ?? DEFAULTS.concurrency, rpm: settings.rpm ?? 'auto', retries: settings.retries ?? DEFAULTS.retries, timeoutMs: duration('timeout', DEFAULTS.timeoutMs), pollMs: duration('poll', DEFAULTS.pollMs) };
}

function planStep(draft: StepDraft, byId: Map<string, StepDraft>, rows: Array<Record<string, unknown>>, settings: PlanSettings, file: SourceFile, recipeDir: string, cwd: string, probe: FileProbe, diagnostics: Diagnostic[]): PlannedStep {
  const path: PathPart[] = ['steps', draft.id];
  const runs = rows.map((row) => {
    const evaluated = (() => {
      try {
        return { ok: true as const, forEach: draft.forEach ? knownValue(draft.forEach, row) : undefined, condition: draft.if ? knownValue(draft.if, row) : undefined };
      } catch (cause) {
        if (!(cause instanceof ExpressionError)) throw cause;
        diagnostics.push(error(file, file.locate(path, 'key'), cause.message));
        return { ok: false as const };
      }
    })();
    if (!evaluated.ok) return 'dynamic' as const;
    if (evaluated.condition === false) return 0;
    if (!draft.forEach) return 1;
    if (evaluated.forEach === UNKNOWN) return 'dynamic' as const;
    if (!Array.isArray(evaluated.forEach)) {
      if (!draft.forEachReported) diagnostics.push(error(file, file.locate([...path, 'for_each']), `for_each must give a list, but this gives ${JSON.stringify(evaluated.forEach)}`));
      return 0;
    }
    return evaluated.forEach.length;
  });
  if (draft.inputSchema) for (const row of rows) checkInputs(draft, row, file, recipeDir, cwd, probe, diagnostics);
  const dependsOn = [...new Set([...draft.references.map((r) => r.step), ...draft.needs.map((n) => n.step)])].filter((id) => id !== draft.id && byId.has(id)) as StepId[];
  const retry = draft.raw.retry;
  const backoffMs = retry?.backoff === undefined ? DEFAULTS.backoffMs : (parseDuration(retry.backoff) ?? DEFAULTS.backoffMs);
  const timeoutMs = draft.raw.timeout === undefined ? settings.timeoutMs : (parseDuration(draft.raw.timeout) ?? settings.timeoutMs);
  return {
    id: draft.id as StepId,
    action: draft.action,
    ...(draft.model ? { model: draft.model } : {}),
    with: draft.with,
    ...(draft.run ? { run: draft.run } : {}),
    ...(draft.forEach ? { forEach: draft.forEach } : {}),
    ...(draft.if ? { if: draft.if } : {}),
    dependsOn,
    retry: { attempts: retry?.attempts ?? settings.retries, backoffMs },
    timeoutMs,
    continueOnError: draft.raw.continue_on_error ?? false,
    mediaFields: draft.mediaFields,
    runs,
    layer: 0,
  };
}

/** The action's input as far as it is known now, checked against its schema; local files checked on disk. */
function checkInputs(draft: StepDraft, row: Record<string, unknown>, file: SourceFile, recipeDir: string, cwd: string, probe: FileProbe, diagnostics: Diagnostic[]): void {
  const withPath: PathPart[] = ['steps', draft.id, 'with'];
  let value: unknown;
  try {
    value = knownValue(draft.with, row);
  } catch (cause) {
    if (!(cause instanceof ExpressionError)) throw cause;
    diagnostics.push(error(file, file.locate(withPath), cause.message));
    return;
  }
  const input = value as Record<string, unknown>;
  for (const media of draft.mediaFields) {
    const fieldValue = input[media.field];
    const entries = media.list && Array.isArray(fieldValue) ? fieldValue.map((v, i) => [v, [media.field, i]] as const) : [[fieldValue, [media.field]] as const];
    for (const [entry, at] of entries) {
      if (typeof entry !== 'string' || entry === UNKNOWN || !isLocalPath(entry)) continue;
      const checked = checkFile(entry, recipeDir, probe, cwd);
      if (checked.problem) diagnostics.push(error(file, file.locate([...withPath, ...at]), checked.problem));
      // A local file becomes a URL once uploaded; the schema sees a stand-in.
      if (media.list && Array.isArray(fieldValue)) (fieldValue as unknown[])[at[1] as number] = `https://upload.invalid/${encodeURIComponent(entry)}`;
      else input[media.field] = `https://upload.invalid/${encodeURIComponent(entry)}`;
    }
  }
  for (const problem of validateModelInput(draft.inputSchema!, input)) {
    if (isUnknownAt(input, problem.path)) continue;
    const at = problem.message === 'is required' ? file.locate(withPath, 'key') : file.locate([...withPath, ...problem.path]);
    const where = problem.message === 'is required' && draft.raw.with === undefined ? file.locate(['steps', draft.id], 'key') : at;
    diagnostics.push(error(file, where, `${problem.field} ${problem.message}${draft.model ? ` (${draft.model.slug})` : ''}`));
  }
}
