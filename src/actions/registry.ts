/**
 * Every action whole: its four parts from the registries of their layers. Nothing that runs or
 * analyzes a recipe loads this (each layer loads its own registry, so the analyzer never loads the
 * engine); it is the contributors' one view of an action, and what the architecture test walks.
 */
import type { ActionKind, PlannedStep, StepOf } from '../plan.js';
import type { ActionCard } from './card-part.js';
import { CARDS } from './cards.js';
import type { ActionDuration } from './duration-part.js';
import { DURATIONS } from './durations.js';
import type { ActionPlan } from './plan-part.js';
import { PLANNERS } from './planners.js';
import type { ActionRun } from './run-part.js';
import { RUNNERS } from './runners.js';

/** Everything about one action, by layer. */
export interface ActionDefinition<S extends PlannedStep> {
  /** Its first guesses of a run's time (base: the analyzer and the engine read them). */
  duration: ActionDuration<S>;
  /** Its schema hook, draft, plan, defaults, estimate and price (the analyzer). */
  plan: ActionPlan<S>;
  /** Its input, runner, workers and step cache (the engine). */
  run: ActionRun<S>;
  /** How its outputs show in the report. */
  card: ActionCard;
}

export type ActionDefinitions = { readonly [K in ActionKind]: ActionDefinition<StepOf<K>> };

/** The kinds, in the registries' order. */
export const ACTION_KINDS = Object.keys(PLANNERS) as ActionKind[];

const definitionOf = <K extends ActionKind>(kind: K): ActionDefinition<StepOf<K>> => ({
  duration: DURATIONS[kind],
  plan: PLANNERS[kind],
  run: RUNNERS[kind],
  card: CARDS[kind],
});

/** Built from the layers' registries: an action added to them is here without a line of its own. */
export const ACTIONS = Object.fromEntries(
  ACTION_KINDS.map((kind) => [kind, definitionOf(kind)]),
) as unknown as ActionDefinitions;
