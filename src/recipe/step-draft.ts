import { Ajv } from 'ajv';
import { MODEL_SLUG, type JsonSchema } from '../model-schemas/bundled.js';
import { mediaFields as mediaFieldsOf } from '../model-schemas/validate.js';
import type { MediaField, PlannedStep } from '../plan.js';
import {
  actionInputs,
  actionOutputs,
  BUILTIN_ACTIONS,
  MODEL_OUTPUTS,
  RUN_OUTPUTS,
  type BuiltinAction,
} from './actions.js';
import type { AnalyzerDeps, RawStep, StepDraft } from './analyzer-types.js';
import { error, type Diagnostic } from './diagnostics.js';
import type { Shape } from './shapes.js';
import type { PathPart, SourceFile } from './source.js';
import { hasExpression } from '../expressions/expressions.js';
import { compileValue, type Reference } from './templates.js';

const ajv = new Ajv({ strict: false });

/** A step's action, schema and compiled values, with what it refers to: the first pass over each step. */
export function draftStep(
  id: string,
  raw: RawStep,
  file: SourceFile,
  deps: AnalyzerDeps,
  diagnostics: Diagnostic[],
): StepDraft {
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
      // A schema with expressions (`maxItems: ${{ inputs.count }}`) is checked once rendered, at run time.
      if (raw.uses === 'llm' && schemaValue !== undefined && !JSON.stringify(schemaValue).includes('${{')) {
        try {
          ajv.compile(schemaValue as object);
        } catch (cause) {
          const reason = (cause as Error).message.replace(/^schema is invalid: /, '').replace(/\bdata\//g, '');
          diagnostics.push(
            error(file, file.locate([...path, 'with', 'schema']), `schema is not a valid JSON Schema: ${reason}`),
          );
        }
      }
    } else if (MODEL_SLUG.test(raw.uses)) {
      const schema = deps.modelSchema(raw.uses);
      action = 'model';
      outputs = MODEL_OUTPUTS;
      if (!schema)
        diagnostics.push(
          error(
            file,
            file.locate([...path, 'uses']),
            `unknown model '${raw.uses}': no schema for it from the gateway or in schemas/models/`,
          ),
        );
      else {
        inputSchema = schema;
        const meta = schema['x-model'] as { type?: string } | undefined;
        model = { slug: raw.uses, type: meta?.type ?? 'unknown' };
        mediaFields = mediaFieldsOf(schema);
      }
    } else {
      diagnostics.push(
        error(
          file,
          file.locate([...path, 'uses']),
          `uses must be ${BUILTIN_ACTIONS.join(', ')} or a model slug provider/model_id (got ${JSON.stringify(raw.uses)})`,
        ),
      );
    }
  }
  if (raw.uses === undefined && raw.with !== undefined)
    diagnostics.push(
      error(file, file.locate([...path, 'with'], 'key'), 'with gives inputs to an action; a run step has none'),
    );
  if (raw.uses !== undefined && raw.runs_on !== undefined)
    diagnostics.push(
      error(
        file,
        file.locate([...path, 'runs_on'], 'key'),
        "runs_on says where a run step's command runs; a uses step goes to the workers whenever the run has --workers",
      ),
    );
  if (raw.uses === 'upload') mediaFields = [{ field: 'path', media: 'any', list: false }];
  const needsList = raw.needs === undefined ? [] : Array.isArray(raw.needs) ? raw.needs : [raw.needs];
  const needs = needsList.map((step, i) => ({
    step,
    path: Array.isArray(raw.needs) ? [...path, 'needs', i] : [...path, 'needs'],
  }));
  return {
    id,
    raw,
    action,
    ...(model ? { model } : {}),
    ...(inputSchema ? { inputSchema } : {}),
    with: compile(raw.with ?? {}, [...path, 'with']),
    ...(raw.run !== undefined ? { run: compile(raw.run, [...path, 'run']) } : {}),
    ...(raw.for_each !== undefined ? { forEach: compile(raw.for_each, [...path, 'for_each']) } : {}),
    ...(raw.if !== undefined ? { if: compile(conditionText(raw.if), [...path, 'if']) } : {}),
    ...(typeof raw.cache === 'object' && raw.cache.key !== undefined
      ? { cacheKey: compile(raw.cache.key, [...path, 'cache', 'key']) }
      : {}),
    references,
    needs,
    mediaFields,
    outputs,
  };
}

/** As in GitHub Actions, an `if` may leave out `${{ }}`: `if: failure()` is an expression, not text. */
function conditionText(condition: string | boolean): string | boolean {
  return typeof condition === 'string' && !hasExpression(condition) ? `\${{ ${condition} }}` : condition;
}
