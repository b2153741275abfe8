import { type FileHashing, itemCacheKey } from '../engine/cache-key.js';
import { plannerOf } from '../actions/planners.js';
import { runnerOf } from '../actions/runners.js';
import { project } from '../engine/item-flow.js';
import { renderValue, truthy } from '../engine/values.js';
import type { Expr, Scope } from '../expressions/expressions.js';
import { readsOnly } from '../recipe/known-values.js';
import { sha256File } from '../cache/blobs.js';
import type { CacheEntry } from '../cache/store.js';
import type { Plan, PlannedStep, ValueTemplate } from '../plan.js';

/** An item whose upstream item the cache does not hold: it runs, and the items after it. */
const NOT_KNOWN = Symbol('not known before the run');

/** Roots whose values are known before the run: the row's inputs, the item, the environment, and
 * the outputs of earlier steps that the step cache holds whole. */
const KNOWN_ROOTS: ReadonlySet<string> = new Set(['inputs', 'item', 'index', 'env', 'steps']);

const knownExpr = (expr: Expr) => readsOnly(expr, KNOWN_ROOTS, { files: true });

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

/**
 * A step whose every input, list and condition can be worked out before the run: from the inputs,
 * and from the outputs of the earlier steps it reads, when the cache holds every item of them, or,
 * for the step its items flow from (`badge[i] ← bg[i]`), some of them.
 */
const forecastable = (step: PlannedStep, known: Scope['steps'], partly: PartlyKnown) =>
  step.cache.enabled &&
  step.dependsOn.every((id) => id in known || (flowsFrom(step) === id && partly.has(id))) &&
  ['with' in step ? step.with : step.run, step.forEach, step.if, step.cache.key].every(knownBeforeRun);

/** The step whose item i each item i of `step` follows alone, if any. */
const flowsFrom = (step: PlannedStep): string | undefined =>
  step.itemsFrom?.perItem ? step.itemsFrom.step : undefined;

/** Steps of a row the cache holds some items of: their outputs by index, undefined where it holds none. */
type PartlyKnown = Map<string, unknown[]>;

/**
 * Where the forecast looks an entry up, reading only: the local store, then the remote tier's
 * entries (a plan downloads no file). `blobPath` is where the local store keeps a file's bytes.
 */
export interface CacheLookup {
  get(key: string, maxAgeMs: number | null): Promise<CacheEntry | undefined>;
  blobPath(sha256: string): string;
}

/** What the step cache tells of a plan before it runs. */
export interface CacheForecast {
  /** Per step, how many of its runs the cache holds now: `pipeline plan` counts only the others. */
  cached: Map<string, number>;
  /**
   * True when the run will send the gateway nothing at all: every step is served whole by the
   * cache, or is a local `run:` command. Such a run makes no request, not even the key check.
   */
  sendsNothing: boolean;
}

/**
 * Walks the plan in order, row by row, as a run would, but from the step cache alone: a step whose
 * every item the cache holds gives its cached outputs to the steps after it (their files by the
 * bytes the cache keeps, as a run keys them), so a chain that is cached whole is known whole.
 * A step that cannot be worked out (a condition on status, a value only a run gives) stops the
 * walk for the steps that read it; they count as to run.
 */
export async function forecastFromCache(
  plan: Plan,
  store: CacheLookup,
  env: Scope['env'],
  /** The gateway the run would send to (part of the keys); unknown, no step that sends requests is looked up. */
  gateway: string | undefined,
): Promise<CacheForecast> {
  const hashes = new Map<string, Promise<string>>();
  const files: FileHashing & { downloads: Map<string, { path: string }> } = {
    downloads: new Map<string, { path: string }>(),
    runDir: '\0',
    recipeDir: plan.recipeDir,
    hashOf: (path: string) => hashes.get(path) ?? hashes.set(path, sha256File(path)).get(path)!,
  };
  const cached = new Map<string, number>(plan.steps.map((step) => [step.id, 0]));
  let sendsNothing = true;
  for (const inputs of plan.rows) {
    const known: Scope['steps'] = {};
    const partly: PartlyKnown = new Map();
    for (const step of plan.steps) {
      const scope: Scope = { inputs, steps: known, run: { id: '', dir: '' }, env };
      const lookedUp =
        forecastable(step, known, partly) && (gateway !== undefined || !runnerOf(step).cache.answeredByGateway);
      const forecast = lookedUp
        ? await forecastStep(step, scope, partly, store, files, hashes, gateway ?? '')
        : undefined;
      if (forecast) cached.set(step.id, cached.get(step.id)! + forecast.hits);
      if (forecast?.whole) known[step.id] = { outputs: forecast.outputs, outcome: 'success', conclusion: 'success' };
      else {
        if (forecast?.hits && step.forEach) partly.set(step.id, forecast.outputs as unknown[]);
        if (plannerOf(step).sendsRequests) sendsNothing = false;
      }
    }
  }
  return { cached, sendsNothing };
}

/**
 * One step of one row from the cache: how many items it holds, and when it holds them all, the
 * step's outputs as a run would give them. Each cached file is registered by its old URL and path,
 * so that a later step's input keys by the file's bytes, as in the run.
 */
async function forecastStep(
  step: PlannedStep,
  scope: Scope,
  partly: PartlyKnown,
  store: CacheLookup,
  files: FileHashing & { downloads: Map<string, { path: string }> },
  hashes: Map<string, Promise<string>>,
  gateway: string,
): Promise<{ hits: number; whole: boolean; outputs: unknown } | undefined> {
  if (step.if) {
    const condition = renderValue(step.if, scope, step.id);
    if (!condition.ok || !truthy(condition.value)) return undefined;
  }
  // Item by item from a step the cache holds part of: item i is known where its upstream item is.
  const upstream = flowsFrom(step);
  const some = upstream !== undefined && !(upstream in scope.steps) ? partly.get(upstream) : undefined;
  const items = some
    ? {
        ok: true as const,
        value: some.map((outputs) => (outputs === undefined ? NOT_KNOWN : project(outputs, step.itemsFrom!))),
      }
    : step.forEach
      ? renderValue(step.forEach, scope, step.id)
      : { ok: true as const, value: [undefined] };
  if (!items.ok || !Array.isArray(items.value)) return undefined;
  let hits = 0;
  const outputs: unknown[] = [];
  for (const [index, item] of items.value.entries()) {
    outputs.push(undefined);
    if (item === NOT_KNOWN) continue;
    const itemScope = step.forEach ? { ...scope, item, index } : scope;
    const input = runnerOf(step).render(step, itemScope, step.id);
    if (!input.ok) continue;
    const key = await itemCacheKey(files, step, itemScope, input.value, step.id, gateway);
    const entry = key.ok ? await store.get(key.value, step.cache.ttlMs) : undefined;
    if (!entry) continue;
    hits++;
    outputs[index] = entry.outputs;
    for (const file of entry.files) {
      const blob = store.blobPath(file.sha256);
      hashes.set(blob, Promise.resolve(file.sha256));
      files.downloads.set(file.path, { path: blob });
      if (file.url) files.downloads.set(file.url, { path: blob });
    }
  }
  return { hits, whole: hits === items.value.length, outputs: step.forEach ? outputs : outputs[0] };
}
