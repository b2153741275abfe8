/** What the engine's parts of several actions share. */
import type { Scope } from '../expressions/expressions.js';
import { renderValue } from '../engine/values.js';
import { itemLabel } from '../item-label.js';
import type { PlannedStep, ValueTemplate } from '../plan.js';
import type { ActionCaching } from './run-part.js';

/** A `uses:` step's input: its `with:`, rendered. */
export const renderWith = (step: { with: ValueTemplate }, scope: Scope, where: string) =>
  renderValue(step.with, scope, `${where}.with`);

/** How the workers and their records name an item. */
export const remoteItem = (row: number, step: PlannedStep, index: number) => ({
  row,
  step: step.id,
  index,
  label: itemLabel({ step: step.id, index: step.forEach ? index : undefined }),
});

/** The cache of an action named by its kind, one request a run, whose entries keep the outputs' files. */
export const oneRequest = <S extends PlannedStep>(kind: S['action']): ActionCaching<S> => ({
  keyAction: () => kind,
  inputHasFields: true,
  cost: () => ({ tasks: 0, requests: 1 }),
  restoresFiles: true,
});
