import { extname, join, sep } from 'node:path';
import { runnerOf } from '../actions/runners.js';
import type { Scope } from '../expressions/expressions.js';
import { outputFilePrefix, type PlannedStep } from '../plan.js';
import { ok, type Result } from '../result.js';
import { CACHED_TASK_ID } from '../store/journal.js';
import { stepKey } from '../store/replay.js';
import { actionOf, itemCacheKey } from './cache-key.js';
import type { EngineContext } from './context.js';
import { emit } from './emit.js';
import { itemOf } from './events.js';
import { recordDownload } from './row-downloads.js';
import { inputForJournal } from './journal-input.js';
import type { StepFailure } from './failure.js';
import type { StoredEntry, StoredFile } from './run-cache.js';

type Outcome = Result<unknown, StepFailure>;

/** One item of a step, as the cache names and files it. */
export interface CacheItem {
  ctx: EngineContext;
  row: number;
  step: PlannedStep;
  index: number;
  scope: Scope;
  /** `hero` or `hero[2]`. */
  label: string;
}

/**
 * Runs the item through the step cache: its outputs from an entry with the same key when there is
 * one (and reading is on), else from `execute`, stored afterwards (when writing is on). Items of
 * this run with one key share one execution.
 */
export async function cachedRun(item: CacheItem, input: unknown, execute: () => Promise<Outcome>): Promise<Outcome> {
  const { ctx, step } = item;
  const cache = ctx.cache!;
  const files = {
    downloads: ctx.downloads,
    runDir: ctx.runDir,
    recipeDir: ctx.plan.recipeDir,
    hashOf: (path: string) => cache.hashOf(path),
  };
  const key = await itemCacheKey(files, step, item.scope, input, item.label, cache.gateway);
  if (!key.ok) return key;
  const shared = cache.inflight.get(key.value);
  if (shared) {
    const outcome = await shared;
    if (!outcome.ok) return execute();
    const entry = cache.mode.write ? await cache.storage.get(key.value, step.cache.ttlMs) : undefined;
    const copied = entry ? await ownCopies(item, entry, outcome.value) : undefined;
    hit(item, key.value, input, entry?.saved ?? { tasks: 0, requests: 0 });
    return copied === undefined ? outcome : ok(copied);
  }
  const attempt = lookUpOrExecute(item, key.value, input, execute);
  cache.inflight.set(key.value, attempt);
  const outcome = await attempt;
  // A failure is not shared: the next item (or the step's retry) tries for itself.
  if (!outcome.ok) cache.inflight.delete(key.value);
  return outcome;
}

async function lookUpOrExecute(item: CacheItem, key: string, input: unknown, execute: () => Promise<Outcome>) {
  const { ctx, step } = item;
  const cache = ctx.cache!;
  if (cache.mode.read) {
    const entry = await cache.storage.get(key, step.cache.ttlMs);
    const restored = entry ? await restore(item, entry, input) : undefined;
    if (restored !== undefined) {
      hit(item, key, input, entry!.saved, { at: entry!.created_at, ...(entry!.run_id ? { run: entry!.run_id } : {}) });
      return ok(restored);
    }
  }
  cache.counts.misses++;
  const outcome = await execute();
  if (outcome.ok && cache.mode.write) await store(item, key, input, outcome.value);
  return outcome;
}

/**
 * Tells of an item the cache served. `made`: when and by which run the entry was made, for the
 * report's card; none for an item whose twin in this run made it (same key, sent once).
 */
function hit(
  item: CacheItem,
  key: string,
  input: unknown,
  saved: StoredEntry['saved'],
  made?: { at: number; run?: string },
): void {
  const { ctx, row, step, index } = item;
  ctx.cache!.recordHit(stepKey(row, step.id), key, saved);
  // Used now: `cache prune` keeps it by its last use, not only by when it was made.
  void ctx.cache!.storage.markUsed(key);
  // The input rides along so that a cached card in the report shows the prompt that made it.
  const asked = inputForJournal(input);
  emit(ctx, {
    type: 'item-cached',
    item: itemOf(row, step, index),
    key,
    ...(asked ? { input: asked } : {}),
    ...(made ? { made } : {}),
  });
}

/** The files a new entry keeps: every path of this run's outputs folder in the outputs, with its URL. */
function filesOf(ctx: EngineContext, step: PlannedStep, input: unknown, outputs: unknown) {
  const urls = new Map([...ctx.downloads].map(([url, d]) => [d.path, { url, expires_at: d.expiresAt }]));
  const paths = new Set<string>();
  const folder = `${ctx.outputsDir}${sep}`;
  const visit = (value: unknown): void => {
    if (typeof value === 'string' && value.startsWith(folder)) paths.add(value);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(visit);
  };
  visit(outputs);
  const files = [...paths].map((path) => ({ path, ...(urls.get(path) ?? { url: null, expires_at: null }) }));
  const kept = runnerOf(step).cache.keptFiles?.(ctx, input, outputs) ?? [];
  return [...files, ...kept];
}

async function store(item: CacheItem, key: string, input: unknown, outputs: unknown): Promise<void> {
  const { ctx, step } = item;
  const files = filesOf(ctx, step, input, outputs);
  await ctx.cache!.storage.put(key, actionOf(step), outputs, files, runnerOf(step).cache.cost(files.length), ctx.runId);
}

/**
 * The entry's outputs for this run: each file put in this run's outputs folder under this item's
 * name, its path in the outputs replaced, its old URL mapped to the new copy (a later step that
 * finds the URL expired uploads the copy). Undefined, after a warning, when a file is damaged.
 */
async function restore(item: CacheItem, entry: StoredEntry, input: unknown): Promise<unknown> {
  const { ctx, step, row } = item;
  const placed = await placeFiles(item, entry);
  if (typeof placed === 'string') {
    ctx.cache!.warn(`cache entry ${entry.key.slice(0, 12)}: a file is ${placed}; running ${item.label} instead`);
    return undefined;
  }
  for (const file of entry.files) {
    const dest = placed.get(file.path);
    if (dest) recordFile(item, file, dest);
  }
  runnerOf(step).cache.restored?.(ctx, entry, input, row);
  return replacePaths(entry.outputs, placed);
}

/**
 * The outputs of an item whose twin in this run (same key, sent once) made them, with files of its
 * own under its own names (`STEP-N.ext` per item, as the README promises): a later step that edits
 * one item's file in place must not edit its twin's. The files' URLs stay the twin's, fresh.
 * Undefined when a file cannot be placed: the item then shares its twin's files.
 */
async function ownCopies(item: CacheItem, entry: StoredEntry, outputs: unknown): Promise<unknown> {
  const placed = await placeFiles(item, entry);
  if (typeof placed === 'string') return undefined;
  // Written as the item's own files (the run's file list, runs show, the report's card), but not
  // as downloads of the twin's URL: that stays the twin's file, fresh.
  for (const file of entry.files) {
    const dest = placed.get(file.path);
    if (dest) tellWritten(item, file, dest);
  }
  return replacePaths(outputs, placed);
}

/**
 * Puts the entry's files (of an action whose outputs are files) in this run's outputs folder under
 * this item's names: each old path to its new one, or what was wrong with the first that could not be.
 */
async function placeFiles(item: CacheItem, entry: StoredEntry): Promise<Map<string, string> | 'missing' | 'damaged'> {
  const files = runnerOf(item.step).cache.restoresFiles ? entry.files : [];
  const moved = new Map<string, string>();
  for (const [n, file] of files.entries()) {
    const dest = join(item.ctx.outputsDir, fileName(item, n, files.length, file));
    const placed = await item.ctx.cache!.storage.materialize(file.sha256, dest);
    if (placed !== 'ok') return placed;
    moved.set(file.path, dest);
  }
  return moved;
}

/** `row-2-hero-3.png` as the model runner names a fresh download of the same item. */
function fileName({ ctx, row, step, index }: CacheItem, n: number, count: number, file: StoredFile): string {
  return `${outputFilePrefix(ctx.plan.rows, row, step, index)}${count > 1 ? `-${n + 1}` : ''}${extname(file.path)}`;
}

/**
 * A cached file's URL is from an earlier run, perhaps of another gateway or long expired: it is
 * marked expired, so that a later step that sends it uploads the local copy instead (one upload,
 * and only when that step runs, in place of a task).
 */
function recordFile(item: CacheItem, file: StoredFile, dest: string): void {
  if (file.url) recordDownload(item.ctx, item.row, file.url, { path: dest, expiresAt: 0 });
  tellWritten(item, file, dest);
}

/** The item's file, placed from the cache, is one of the run's outputs. */
function tellWritten({ ctx, row, step, index }: CacheItem, file: StoredFile, dest: string): void {
  const written = { taskId: CACHED_TASK_ID, url: file.url ?? '', path: dest, bytes: file.bytes };
  emit(ctx, { type: 'output-written', item: itemOf(row, step, index), ...written });
}

function replacePaths(value: unknown, moved: Map<string, string>): unknown {
  if (typeof value === 'string') return moved.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => replacePaths(v, moved));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replacePaths(v, moved)]));
  return value;
}
