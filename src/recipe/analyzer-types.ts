import type { JsonSchema, RecipeLanguageSchemas } from '../model-schemas/bundled.js';
import type { MediaField, PlannedStep, ValueTemplate } from '../plan.js';
import type { FileProbe, InputDefinition } from './inputs.js';
import type { Shape } from './shapes.js';
import type { PathPart } from './source.js';
import type { Reference } from './templates.js';

export interface AnalyzerInput {
  path: string;
  text: string;
  /** `name=value` pairs from `--set`. */
  sets?: string[];
  batch?: { path: string; text: string };
  /** Where `--set` file paths are relative to. */
  cwd: string;
  /** `--skip-invalid-rows`: leave out batch rows whose values are invalid, and list them, instead of failing. */
  skipInvalidRows?: boolean;
}

/** The analyzer's window on the world: it does no I/O of its own. */
export interface AnalyzerDeps {
  /** A model's request schema, or undefined for an unknown model. */
  modelSchema: (slug: string) => JsonSchema | undefined;
  /** The models analysis knows (the bundled ones): what an unknown slug is compared with, for "did you mean". */
  modelSlugs?: () => readonly string[];
  /** The recipe's own JSON Schema and the tools' request schemas, as the package ships them. */
  schemas: RecipeLanguageSchemas;
  probe: FileProbe;
}

/** A step as the recipe schema lets it through: its structure is checked, its meaning not yet. */
export interface RawStep {
  uses?: string;
  with?: Record<string, unknown>;
  run?: string | string[];
  needs?: string | string[];
  for_each?: string | unknown[];
  if?: string | boolean;
  retry?: { attempts?: number; backoff?: string | number; non_retryable?: string[] };
  timeout?: string | number;
  continue_on_error?: boolean;
  runs_on?: 'worker' | 'local';
  cache?: boolean | { ttl?: string | number; key?: string };
}

/** A recipe that passed the recipe schema. */
export interface RawRecipe {
  version: 1;
  name: string;
  description?: string;
  inputs?: Record<string, InputDefinition>;
  settings?: {
    concurrency?: number;
    queue_ahead?: number;
    rpm?: 'auto' | number;
    retries?: number;
    timeout?: string | number;
    poll?: string | number;
    cache?: boolean;
    cache_remote?: string;
    max_cost?: number;
    prices?: Record<string, unknown>;
    pass_env?: string[];
    item_flow?: boolean;
  };
  steps: Record<string, RawStep>;
  outputs?: Record<string, string>;
}

/** Everything about one step that the later passes need. */
export interface StepDraft {
  id: string;
  raw: RawStep;
  action: PlannedStep['action'];
  model?: { slug: string; type: string };
  inputSchema?: JsonSchema;
  with: ValueTemplate;
  run?: ValueTemplate;
  forEach?: ValueTemplate;
  if?: ValueTemplate;
  cacheKey?: ValueTemplate;
  references: Reference[];
  needs: Array<{ step: string; path: PathPart[] }>;
  mediaFields: MediaField[];
  outputs: Shape;
  /** Its for_each was already reported as not a list. */
  forEachReported?: boolean;
}
