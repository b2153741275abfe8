// The library API: a recipe run from a Node script, without the command line. Mistakes come back
// as values (a recipe's with file, line and column); only bugs throw.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { systemClock } from '../clock.js';
import type { GatewayFailure } from '../gateway/failures.js';
import { parseRemoteUrl } from '../cache/remote-url.js';
import { diagnosticJson, errorsIn, formatDiagnostics } from '../recipe/diagnostics.js';
import { err, ok, type Result } from '../result.js';
import { checkRedisUrl } from '../scheduler/redis-url.js';
import type { RunCost, StepSummary } from '../store/summary.js';
import { pipelineHomeOf, type SessionEnvironment, secretSet } from './environment.js';
import { GatewayRefusal, InvalidRecipe, UsageError } from './errors.js';
import type { RunOptions } from './options.js';
import { loadRecipeFile, offlineSchemas } from './recipe.js';
import type { EndedSummary } from './run-end.js';
import { resumeRun } from './resume.js';
import { type SessionRun, startRun } from './run.js';

/** A place in a recipe or batch file, and what is wrong there. */
export interface RecipeProblem {
  severity: 'error' | 'warning';
  message: string;
  file: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
}

/** Why a run did not start. Nothing that costs money was sent. */
export type RunFailure =
  /** The recipe (or its inputs) does not check: each problem names file, line and column. */
  | { kind: 'invalid-recipe'; message: string; problems: RecipeProblem[]; text: string }
  /** A mistake in the options or the settings (no API key, an estimate over the cap, an unreadable file). */
  | { kind: 'usage'; message: string }
  /** The gateway refused the key or could not be reached. */
  | { kind: 'gateway'; message: string; failure: GatewayFailure };

/** A run that ended: succeeded, failed, stopped by money, or interrupted through `signal`. */
export interface RunOutcome {
  runId: string;
  status: 'succeeded' | 'failed' | 'stopped' | 'interrupted';
  /** The run's folder (journal.jsonl, run.json, report.html), under `home`/runs. */
  runDir: string;
  outputsDir: string;
  /** The recipe's `outputs`, one object per row. */
  outputs: Array<Record<string, unknown>>;
  /** Each step's end, per row: status, failed and skipped items, cached runs. */
  items: StepSummary[];
  /** The files the run downloaded. */
  files: EndedSummary['files'];
  /** The estimate and what was committed, in USD. */
  spend: RunCost;
  /** run.json as written. */
  summary: EndedSummary;
  reportPath: string | undefined;
  /** Files copied to `out`. */
  copied: string[];
}

/** A recipe to run, and how. */
export interface RecipeRunOptions extends RunOptions {
  /** The recipe file, relative to `cwd`. */
  recipe: string;
}

function environmentOf(options: RunOptions): SessionEnvironment {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const secrets = secretSet();
  return {
    env,
    cwd,
    clock: options.clock ?? systemClock,
    home: options.home !== undefined ? resolve(cwd, options.home) : pipelineHomeOf(env, cwd),
    secrets,
    warn: options.warn ?? ((text) => process.stderr.write(`${secrets.redact(text)}\n`)),
  };
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 1;
const isUsd = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** Options checked at the door, naming the field and the value. */
export function checkRunOptions(options: RunOptions): string | undefined {
  const shown = (value: unknown) => JSON.stringify(value);
  if (options.concurrency !== undefined && !isCount(options.concurrency))
    return `concurrency must be a whole number of at least 1, got ${shown(options.concurrency)}`;
  if (options.queueAhead !== undefined && !(options.queueAhead === 0 || isCount(options.queueAhead)))
    return `queueAhead must be a whole number of at least 0, got ${shown(options.queueAhead)}`;
  if (options.rpm !== undefined && options.rpm !== 'auto' && !isCount(options.rpm))
    return `rpm must be a whole number of at least 1 or 'auto', got ${shown(options.rpm)}`;
  if (options.maxCostUsd !== undefined && !isUsd(options.maxCostUsd))
    return `maxCostUsd must be a number of at least 0, got ${shown(options.maxCostUsd)}`;
  if (options.confirmAboveUsd !== undefined && !isUsd(options.confirmAboveUsd))
    return `confirmAboveUsd must be a number of at least 0, got ${shown(options.confirmAboveUsd)}`;
  if (options.set !== undefined && !options.set.every((entry) => typeof entry === 'string' && entry.includes('=')))
    return `set takes strings name=value, got ${shown(options.set)}`;
  const remote = options.cache?.remote;
  if (typeof remote === 'string') {
    const address = parseRemoteUrl(remote);
    if (!address.ok) return `cache.remote: ${address.error}`;
  }
  if (options.workers) {
    const url = checkRedisUrl(options.workers.url, 'workers.url');
    if (!url.ok) return url.error;
    if (options.gateway?.local) return 'workers needs a gateway the workers reach too; gateway.local starts one here';
    if (options.webhook) return 'workers and webhook do not go together: the workers poll the tasks they submit';
  }
  if (options.webhook?.url !== undefined && !/^https?:\/\//.test(options.webhook.url))
    return `webhook.url must be an http(s) URL, got ${shown(options.webhook.url)}`;
  return undefined;
}

/** A session's run as the library answers it. */
function outcomeOf(run: SessionRun): RunOutcome {
  return {
    runId: run.runId,
    status: run.status,
    runDir: run.runDir,
    outputsDir: run.outputsDir,
    outputs: run.result.outputs,
    items: run.summary.steps,
    files: run.summary.files,
    spend: run.summary.cost,
    summary: run.summary,
    reportPath: run.reportPath,
    copied: run.copied,
  };
}

/** Mistakes and refusals as values; anything else is a bug and is thrown on. */
async function asValue<T>(work: () => Promise<T>): Promise<Result<T, RunFailure>> {
  try {
    return ok(await work());
  } catch (error) {
    if (error instanceof InvalidRecipe) return err(invalidRecipe(error));
    if (error instanceof UsageError) return err({ kind: 'usage', message: error.message });
    if (error instanceof GatewayRefusal)
      return err({ kind: 'gateway', message: error.message, failure: error.failure });
    throw error;
  }
}

function invalidRecipe(error: InvalidRecipe): RunFailure {
  return {
    kind: 'invalid-recipe',
    message: error.message,
    problems: error.diagnostics.map(diagnosticJson),
    text: formatDiagnostics(error.diagnostics),
  };
}

/**
 * Runs a recipe to its end, as `pipeline run` does: analyzes it, checks its estimate against the
 * cap and the balance, connects (with `gateway: { local: true }`, to a gateway started in this
 * process), runs every step with a journal under `home`/runs, writes run.json and the report.
 * Answers the run's outcome, or why it did not start.
 *
 * @example
 * const run = await runRecipe({ recipe: 'poster.yaml', set: ['title=Hello'], gateway: { local: true } });
 * if (!run.ok) console.error(run.error.message);
 * else console.log(run.value.status, run.value.outputs[0]);
 */
export async function runRecipe(options: RecipeRunOptions): Promise<Result<RunOutcome, RunFailure>> {
  const problem = checkRunOptions(options);
  if (problem) return err({ kind: 'usage', message: problem });
  const environment = environmentOf(options);
  return asValue(async () => {
    const loaded = await loadRecipeFile(options.recipe, options, environment.cwd, offlineSchemas(environment.home));
    if (!loaded.ok) {
      throw new InvalidRecipe(`${errorsIn(loaded.error)}; nothing was run`, loaded.error);
    }
    const recipeText = readFileSync(resolve(environment.cwd, options.recipe), 'utf8');
    return outcomeOf(await startRun(loaded.value, options, environment, { recipeText, batchPath: options.batch }));
  });
}

/**
 * Resumes a run from its journal, as `pipeline resume` does: finished steps are kept, submitted
 * tasks are polled, not sent again. A run that already succeeded answers its id and
 * `already-succeeded`.
 */
export async function resumeRecipe(
  runId: string,
  options: RunOptions = {},
): Promise<Result<RunOutcome | { runId: string; status: 'already-succeeded' }, RunFailure>> {
  const problem = checkRunOptions(options);
  if (problem) return err({ kind: 'usage', message: problem });
  const environment = environmentOf(options);
  return asValue(async () => {
    const run = await resumeRun(runId, options, environment);
    return run.status === 'already-succeeded' ? run : outcomeOf(run);
  });
}
