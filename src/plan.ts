/**
 * The types of a valid plan: what the analyzer produces and the engine accepts. Nothing else
 * reaches the engine; a plan exists only when the recipe had no errors.
 */
import type { Segment, Template } from './expressions/expressions.js';
import type { PriceRule } from './model-schemas/prices.js';

export type StepId = string & { readonly __brand: 'StepId' };

/** A value from the recipe, with its expressions parsed. */
export type ValueTemplate =
  | { kind: 'literal'; value: unknown }
  | { kind: 'template'; template: Template; text: string }
  | { kind: 'list'; items: ValueTemplate[] }
  | { kind: 'map'; entries: Record<string, ValueTemplate> };

/** A URL-typed model input: local paths in it are uploaded and replaced by their URL. */
export interface MediaField {
  field: string;
  media: string;
  list: boolean;
}

/** A place in the recipe, as an editor and GitHub count: lines and columns from 1. */
export interface RecipePosition {
  line: number;
  column: number;
}

/** What every planned step has, whatever its action. */
interface StepCommon {
  id: StepId;
  /** Where the step's id stands in the recipe (`plan.recipePath`): what its failures point at. */
  location: RecipePosition;
  forEach?: ValueTemplate;
  if?: ValueTemplate;
  /**
   * Its `if` is decided only at run time (it reads a step's outputs or outcome, or calls a status
   * function) in a row where it may run: its runs may not happen. An `if` on inputs alone is
   * decided by the analysis, in `runs` (0 where false).
   */
  ifAtRunTime?: true;
  /** Every step this one waits for: references and `needs`. */
  dependsOn: StepId[];
  /** `nonRetryable`: failure reasons this step does not retry, though they are retried by default. */
  retry: { attempts: number; backoffMs: number; nonRetryable?: readonly string[] };
  timeoutMs: number;
  continueOnError: boolean;
  mediaFields: MediaField[];
  /** Runs per batch row: known when the `for_each` list is known at plan time. */
  runs: Array<number | 'dynamic'>;
  /** 0 for steps with no dependencies. */
  layer: number;
  cache: StepCachePolicy;
  /** Set when `for_each` iterates an earlier step's items: item i comes from that step's item i. */
  itemsFrom?: ItemLineage;
  /**
   * Earlier for_each steps this one reads chosen items of only (`steps.hero.outputs[0]…`), with item
   * flow on: it waits for those items (`branded ← hero[0]`), not for the whole step.
   */
  chosenItems?: ChosenItems[];
}

/** The items of a for_each step that another step reads by their index, and nothing else of it. */
export interface ChosenItems {
  step: StepId;
  /** Ascending, without repeats. */
  indices: number[];
}

/** A `uses:` step: its input is the recipe's `with:`. */
interface UsesStep extends StepCommon {
  with: ValueTemplate;
}

/** `uses: provider/model`: a task of a media model on the gateway. */
export interface ModelStep extends UsesStep {
  action: 'model';
  /** The slug and the model's type (`text-to-image`, …) from its schema. */
  model: { slug: string; type: string };
}

export interface LlmStep extends UsesStep {
  action: 'llm';
}

export interface WebSearchStep extends UsesStep {
  action: 'web-search';
}

export interface WebFetchStep extends UsesStep {
  action: 'web-fetch';
}

export interface UploadStep extends UsesStep {
  action: 'upload';
}

/** `run:`: a local command. */
export interface RunStep extends StepCommon {
  action: 'run';
  /** The command, a string for the shell or an argv list. */
  run: ValueTemplate;
  /**
   * Where its command runs with `--workers`. `local` (the default): in this process, which has
   * every file; `worker`: on a worker, its input files sent and its new files brought back.
   */
  runsOn: 'worker' | 'local';
}

/** A step of a valid plan: one variant per action, each with only its own fields (src/actions/ owns each). */
export type PlannedStep = ModelStep | LlmStep | WebSearchStep | WebFetchStep | UploadStep | RunStep;

export type ActionKind = PlannedStep['action'];

/** The planned step of one action. */
export type StepOf<K extends ActionKind> = Extract<PlannedStep, { action: K }>;

/**
 * Item lineage: the `for_each` of a step iterates another step's items (`steps.X.outputs`, or
 * `steps.X.outputs[*].images[0].url`), so item i of this step comes from item i of X.
 */
export interface ItemLineage {
  step: StepId;
  /** The path taken of each upstream item's outputs (after `outputs[*]`); empty for the outputs themselves. */
  projection: Segment[];
  /**
   * Each item waits for its own upstream item only, and ends with it when it fails (`badge[i] ←
   * bg[i]`). False when the step also reads X as a whole, or with `settings.item_flow: false`:
   * then it waits for all of X, as every other step does.
   */
  perItem: boolean;
  /** Why the step waits for all of X, for `plan`. */
  wholeBecause?: string;
  /**
   * Steps further up the item's chain whose outcome its `if` reads (`steps.t2i.outcome` in an item
   * of `again ← edit ← t2i`): the outcome of the item's own ancestor, so not waited for as a whole.
   */
  ancestorsReadPerItem?: StepId[];
  /**
   * The step's `if` reads the outcome or conclusion of an item in the item's own lineage: after a
   * failure under continue_on_error (a `success` conclusion) that `if` decides whether the item runs.
   */
  ifReadsLineageOutcome?: true;
}

/** Whether a step's outputs are reused from the step cache, for how long, and what else keys them. */
export interface StepCachePolicy {
  enabled: boolean;
  /** How old an entry may be; null: no expiry. */
  ttlMs: number | null;
  /** The recipe's `cache.key`, rendered with the step's input and added to the key. */
  key?: ValueTemplate;
}

export interface PlanSettings {
  concurrency: number;
  /**
   * `settings.queue_ahead`: tasks submitted beyond `concurrency`, to wait in the gateway's own queue
   * and start there the moment one of the run's tasks ends, before a poll has seen that end.
   */
  queueAhead: number;
  rpm: 'auto' | number;
  retries: number;
  timeoutMs: number;
  pollMs: number;
  /** `settings.cache`: the default of the steps that do not set `cache`. */
  cache: boolean;
  /** `settings.cache_remote`: `s3://bucket/prefix`, a remote tier of the step cache. */
  cacheRemote?: string;
  /** `settings.max_cost`: the most the run may commit, in USD. */
  maxCostUsd?: number;
  /** `settings.prices`: price rules by model slug, over the bundled ones. */
  prices?: Record<string, PriceRule>;
  /** `settings.pass_env`: variables (names, or prefixes ending in `*`) a `run:` step's command sees. */
  passEnv: string[];
  /** `settings.item_flow`: items flow one by one through chains of steps (default); false keeps each step a barrier. */
  itemFlow: boolean;
}

/**
 * A plan's input sets, read by index or in order: a list (a recipe's one row), or for a batch a
 * table that makes each row when it is asked for (`RowTable`), so that a million rows are never a
 * million objects. Each row asked for may be a new object: read it once and keep it while needed.
 */
export interface InputRows extends Iterable<Record<string, unknown>> {
  readonly length: number;
  /** The rows of a `--batch` file: true even for one row (see isBatch). */
  readonly batch?: boolean;
  at(index: number): Record<string, unknown> | undefined;
  entries(): Iterable<[number, Record<string, unknown>]>;
}

/**
 * Whether the rows are a batch's, even of one row: its outputs are then a list, one per row, and
 * its files are named by row (`row-1-hero.png`, `--out DIR/row-1/`), so that a script reads a
 * one-row batch as it reads any other.
 */
export const isBatch = (rows: InputRows): boolean => rows.batch === true || rows.length > 1;

/** Whether the recipe names `outputs:`: what a row keeps, `--out` copies and run.json lists. */
export const hasOutputs = (plan: Pick<Plan, 'outputs'>): boolean => Object.keys(plan.outputs).length > 0;

/** The file name an item's output starts with: `row-2-hero-3` for row 2's `hero[2]` in a batch. */
export const outputFilePrefix = (rows: InputRows, row: number, step: PlannedStep, index: number): string =>
  `${isBatch(rows) ? `row-${row + 1}-` : ''}${step.id}${step.forEach ? `-${index + 1}` : ''}`;

export interface Plan {
  state: 'valid';
  name: string;
  description?: string;
  recipePath: string;
  /** Relative paths in the recipe are resolved against this folder. */
  recipeDir: string;
  /** One input set per batch row; one row without `--batch`. */
  rows: InputRows;
  /** Batch rows left out by `--skip-invalid-rows`: where each is and what is wrong with it. */
  skippedRows?: Array<{ where: string; message: string }>;
  settings: PlanSettings;
  /** In an order where every step comes after those it depends on. */
  steps: PlannedStep[];
  layers: StepId[][];
  outputs: Record<string, ValueTemplate>;
}
