import { itemCacheKey } from '../engine/cache-key.js';
import { renderCommand } from '../engine/command.js';
import { renderValue, truthy } from '../engine/values.js';
import { STATUS_FUNCTIONS, type Expr, type Scope } from '../expressions/expressions.js';
import { sha256File } from '../cache/blobs.js';
import type { CacheStore } from '../cache/store.js';
import type { Plan, PlannedStep, ValueTemplate } from '../plan.js';

/** Roots whose values `pipeline plan` knows: the row's inputs, the item, the environment. */
const KNOWN_ROOTS = new Set(['inputs', 'item', 'index', 'env']);

function knownExpr(expr: Expr): boolean {
  if (expr.kind === 'literal') return true;
  if (expr.kind === 'call') return !STATUS_FUNCTIONS.has(expr.name) && expr.args.every(knownExpr);
  if (expr.kind === 'binary') return knownExpr(expr.left) && knownExpr(expr.right);
  if (expr.kind === 'not') return knownExpr(expr.operand);
  if (expr.kind === 'access') return knownExpr(expr.target);
  return KNOWN_ROOTS.has(expr.root);
}

function knownBeforeRun(value: ValueTemplate | undefined): boolean {
  if (value === undefined) return true;
  switch (value.kind) {
    case 'literal':
      return true;
    case 'list':
      return value.items.every(knownBeforeRun);
    case 'map':
      return Object.values(value.entries).every(knownBeforeRun);
    case 'template':
      return value.template.parts.every((p) => typeof p === 'string' || knownExpr(p.expr));
  }
}

/** A step whose every input, list and condition is known before the run: no earlier step's output in it. */
const plannable = (step: PlannedStep) =>
  step.cache.enabled &&
  step.dependsOn.length === 0 &&
  [step.with, step.run, step.forEach, step.if, step.cache.key].every(knownBeforeRun);

/**
 * For each step whose input is known before the run, how many of its runs the step cache holds
 * now: `pipeline plan` counts only the others. Steps that depend on earlier steps are not counted,
 * though they may well come from the cache too.
 */
export async function cachedRuns(plan: Plan, store: CacheStore, env: Scope['env']): Promise<Map<string, number>> {
  const hashes = new Map<string, Promise<string>>();
  const files = {
    downloads: new Map<string, { path: string }>(),
    runDir: '\0',
    recipeDir: plan.recipeDir,
    hashOf: (path: string) => hashes.get(path) ?? hashes.set(path, sha256File(path)).get(path)!,
  };
  const counts = new Map<string, number>();
  for (const step of plan.steps.filter(plannable)) {
    let cached = 0;
    for (const inputs of plan.rows) {
      const scope: Scope = { inputs, steps: {}, run: { id: '', dir: '' }, env };
      if (step.if) {
        const condition = renderValue(step.if, scope, step.id);
        if (!condition.ok || !truthy(condition.value)) continue;
      }
      const items = step.forEach
        ? renderValue(step.forEach, scope, step.id)
        : { ok: true as const, value: [undefined] };
      if (!items.ok || !Array.isArray(items.value)) continue;
      for (const [index, item] of items.value.entries()) {
        const itemScope = step.forEach ? { ...scope, item, index } : scope;
        const input =
          step.action === 'run'
            ? renderCommand(step.run!, itemScope, step.id)
            : renderValue(step.with, itemScope, step.id);
        if (!input.ok) continue;
        const key = await itemCacheKey(files, step, itemScope, input.value, step.id);
        if (key.ok && (await store.get(key.value, step.cache.ttlMs))) cached++;
      }
    }
    counts.set(step.id, cached);
  }
  return counts;
}
