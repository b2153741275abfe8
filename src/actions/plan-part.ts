import type { JsonSchema } from '../model-schemas/bundled.js';
import type { Pricing } from '../model-schemas/prices.js';
import type { MediaField, Plan, PlannedStep } from '../plan.js';
import type { AnalyzerDeps, RawStep, StepDraft } from '../recipe/analyzer-types.js';
import type { Diagnostic } from '../recipe/diagnostics.js';
import type { StepCost } from '../recipe/estimate-cost.js';
import type { StepRuns, Tally } from '../recipe/estimate-tally.js';
import type { Shape } from '../recipe/shapes.js';
import type { PathPart, SourceFile } from '../recipe/source.js';

/** What drafting a step's action may read and report into. */
export interface DraftContext {
  raw: RawStep;
  /** `['steps', id]`: where the step is in the recipe. */
  path: PathPart[];
  file: SourceFile;
  deps: AnalyzerDeps;
  diagnostics: Diagnostic[];
}

/** What an action tells the analyzer of one step: its input's schema, its outputs' shape, its media fields. */
export interface ActionDraft {
  /** Its `with:` is checked against it; none for a `run:` step (or an unknown model, already reported). */
  inputSchema?: JsonSchema;
  outputs: Shape;
  mediaFields: MediaField[];
  model?: { slug: string; type: string };
}

/** The fields of a planned step that only its action has (`action`, `model`, `run`, `runsOn`, `with`). */
export type OwnFields<S extends PlannedStep> = Omit<S, Exclude<keyof PlannedStep, 'action'>>;

/**
 * The analyzer's part of an action (the recipe layer): how `uses:` names it, its schema hook and
 * draft, its planned step, its defaults, its estimate and its price.
 */
export interface ActionPlan<S extends PlannedStep> {
  /** Whether a step's `uses:` names this action; `undefined` is a step with `run:`. */
  claims(uses: string | undefined): boolean;
  /** How `uses:` names it, in the error that lists them all (`llm`); none when `uses:` cannot name it. */
  usesText?: string;
  /** Its input schema and outputs shape; checks of its own (an llm's answer schema) report into `ctx.diagnostics`. */
  draft(ctx: DraftContext): ActionDraft;
  /** Its own fields of the planned step, from the draft. */
  plan(draft: StepDraft): OwnFields<S>;
  /** Whether its runs send requests to the gateway (a local command sends none): a plan of none needs no key. */
  sendsRequests: boolean;
  /** Whether a failed step is retried `settings.retries` times when it does not say `retry:`. */
  retriesByDefault: boolean;
  /** The step cache's defaults: on when `settings.cache` is (unless false here), and how long an entry lasts. */
  cache: { byDefault: boolean; ttlMs: number | null };
  /** Its requests, tasks, task time and local files added to the plan's tally. */
  estimate(step: S, runs: StepRuns, tally: Tally): void;
  /** Its cost, or null when it runs no paid task; `cached` runs cost nothing. */
  price(plan: Plan, step: S, cached: number, pricing: Pricing | undefined): StepCost | null;
}
