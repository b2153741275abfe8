import type { EngineContext } from '../engine/context.js';
import type { StepFailure } from '../engine/failure.js';
import type { StoredEntry } from '../engine/run-cache.js';
import type { Scope } from '../expressions/expressions.js';
import type { PlannedStep } from '../plan.js';
import type { Result } from '../result.js';

/** What an action's runner gives back: the item's outputs, or why it failed. */
export type RunnerResult<T = unknown> = Promise<Result<T, StepFailure>>;

/** One item to run: where it is, and the signal that stops it. */
export interface ActionItem<S extends PlannedStep> {
  ctx: EngineContext;
  row: number;
  step: S;
  index: number;
  signal: AbortSignal;
  /** Told when the item takes its task slot (a model's): its own time limit starts then. */
  started?: () => void;
}

/** A file a cache entry keeps besides the outputs' own. */
export interface KeptFile {
  path: string;
  url: string | null;
  expires_at: number | null;
}

/** How the step cache keys, stores and restores an action's items. */
export interface ActionCaching<S extends PlannedStep> {
  /** The key's `action` part: what the request calls (`llm`, `model acme/flux`). */
  keyAction(step: S): string;
  /**
   * Whether the input's keys are fields, whose local files the key takes by content when they are
   * media fields. A command has no fields: only values that are paths of this run's files.
   */
  inputHasFields: boolean;
  /**
   * Whether the gateway answers its items (a model, a text call, a search, an upload): then the
   * gateway is part of the key, and the built-in one's answers never serve a run on a real one.
   */
  answeredByGateway: boolean;
  /** What one run cost at the least, recorded as what a hit saves: a task's submission, one read, each download. */
  cost(files: number): { tasks: number; requests: number };
  /** Whether the entry's files are outputs, put back in this run's outputs folder on a hit. */
  restoresFiles: boolean;
  /** Files an entry keeps besides the outputs' own (an upload: the file it sent). */
  keptFiles?(ctx: EngineContext, input: unknown, outputs: unknown): KeptFile[];
  /** What a hit does besides giving the outputs (an upload: its URL maps to the local file). */
  restored?(ctx: EngineContext, entry: StoredEntry, input: unknown, row: number): void;
}

/**
 * The engine's part of an action (the engine layer): its input rendered for an item, its runner,
 * whether it goes to the workers, and how the step cache treats it.
 */
export interface ActionRun<S extends PlannedStep> {
  /** The item's input in its scope: the `with:`, or a `run:` step's command. */
  render(step: S, scope: Scope, where: string): Result<unknown, StepFailure>;
  /** Whether an item's own time limit starts when it takes a task slot (true), or when it starts (false). */
  timedFromSlot: boolean;
  /** Whether its items run on workers when the run has `--workers`. */
  onWorkers(step: S): boolean;
  /** Runs one item on its rendered input. */
  run(item: ActionItem<S>, input: unknown): RunnerResult;
  cache: ActionCaching<S>;
}
