// A resume: the journal replayed, the checks that keep it from paying twice, then the same run.
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { Plan } from '../plan.js';
import { analyze } from '../recipe/analyzer.js';
import { ownerAliveHere } from '../store/fold.js';
import { describeLines, FileJournal, type RunOwner } from '../store/journal.js';
import { type ReplayedState, replayJournalFile } from '../store/replay.js';
import { type RunPaths, runExists, runPaths } from '../store/run-store.js';
import { connect } from './connection.js';
import { type SessionEnvironment, shownPath } from './environment.js';
import { InvalidRecipe, UsageError } from './errors.js';
import { moneyBeforeStart } from './money.js';
import type { RunOptions } from './options.js';
import { analyzerDeps, offlineSchemas } from './recipe.js';
import { changedFiles } from './run-files.js';
import { rowsDigest } from './row-digest.js';
import { budgetOptions, checkedOrClosed, execute, type SessionRun, thisProcess } from './run.js';

/** The file in a run's folder that names the process resuming it (see claimRun). */
const RESUME_CLAIM = 'resume.claim';

/** A resume of a run that had already succeeded: nothing to do. */
export interface AlreadySucceeded {
  runId: string;
  status: 'already-succeeded';
  /** It ran a batch file (`--batch`): its outputs are a list by row, even of one row. */
  fromBatchFile: boolean;
}

/** Resumes a run from its journal with the recipe and inputs it kept. */
export async function resumeRun(
  runId: string,
  options: RunOptions,
  environment: SessionEnvironment,
): Promise<SessionRun | AlreadySucceeded> {
  const { home } = environment;
  if (!runExists(home, runId))
    throw new UsageError(`no run ${runId} in ${shownPath(home, environment.cwd)}/runs (pipeline runs list shows them)`);
  const paths = runPaths(home, runId);
  const replayed = replayJournalFile(paths.journal);
  if (!replayed.ok) throw new UsageError(`run ${runId} cannot be resumed: ${replayed.error.message}`);
  const state = replayed.value;
  if (state.status === 'succeeded') return { runId, status: 'already-succeeded', fromBatchFile: state.batch !== null };
  // Two processes on one run would each submit its unfinished items: every one paid for twice.
  // (This process as the owner: a run of its own that it stopped, as a test or a script may.)
  if (state.status === 'running' && state.owner && !isThisProcess(state.owner)) throw stillRunning(runId, state.owner);
  claimRun(paths, runId);
  checkJournalDamage(runId, state, options, environment);
  const kept = readFileSync(paths.recipe, 'utf8');
  const plan = keptRows(runId, analyzeKeptRecipe(paths, kept, state, environment), state);
  checkLocalFiles(state, options, environment);
  warnOfEditedRecipe(paths, kept, state, environment);
  const money = await moneyBeforeStart(plan, options, environment, true);
  const connection = await connect(options.gateway ?? {}, budgetOptions(plan, options, environment), environment);
  if (state.gateway !== undefined && state.gateway !== connection.gateway) {
    // The same gateway may answer at another address (localhost for 127.0.0.1, a new port): --force says so.
    if (options.force)
      environment.warn(
        `warning: --force: run ${runId} was started against ${state.gateway}; going on against ${connection.gateway} as the same gateway`,
      );
    else {
      await connection.close();
      throw otherGateway(runId, state.gateway, connection.gateway);
    }
  }
  await checkedOrClosed(connection, plan);
  const journal = new FileJournal(paths.journal, () => connection.clock.now());
  const accepted =
    options.force && state.unacceptedDamage.length > 0 ? { accepted_damage: state.unacceptedDamage } : {};
  await journal.appendDurable({ type: 'run-resumed', owner: thisProcess(), ...accepted });
  return execute(plan, options, environment, connection, paths, journal, state, money);
}

const isThisProcess = (owner: RunOwner) => owner.pid === process.pid && owner.host === hostname();

/** The run's process is alive (on this machine), or on another machine where it cannot be checked. */
function stillRunning(runId: string, owner: RunOwner): UsageError {
  const where =
    owner.host === hostname() ? `process ${owner.pid} on this machine` : `process ${owner.pid} on ${owner.host}`;
  return new UsageError(
    `run ${runId} is still running (${where}); stop it first (Ctrl-C, or kill ${owner.pid}), then resume it: ` +
      'two processes on one run would each submit its unfinished items. Nothing was sent',
  );
}

/**
 * The run's tasks and uploaded files are on the gateway it was started against: read on another,
 * its tasks in flight would fail as unknown, and their paid work would be lost.
 */
function otherGateway(runId: string, was: string, now: string): UsageError {
  const named = (gateway: string) => (gateway === 'local' ? 'the built-in gateway (--local)' : gateway);
  const fix =
    was === 'local'
      ? 'add --local'
      : `set PIPELINE_BASE_URL (or --base-url) to ${was}${now === 'local' ? ', without --local' : ''}`;
  return new UsageError(
    `run ${runId} was started against ${named(was)}, and this resume would go to ${named(now)}, ` +
      `where its tasks and uploaded files are not: resume it against the same gateway (${fix}), or, if that ` +
      'is the same gateway at another address, with --force. Nothing was sent',
  );
}

/**
 * Claims the run for this resume, so that a second resume started at the same moment (before
 * either has written its `run-resumed` line) stops rather than submitting the same items: a file
 * created only if absent, naming this process. One whose process is gone is taken over.
 */
function claimRun(paths: RunPaths, runId: string): void {
  const claim = join(paths.dir, RESUME_CLAIM);
  const mine = JSON.stringify(thisProcess());
  try {
    writeFileSync(claim, mine, { flag: 'wx' });
    return;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw cause;
  }
  let holder: RunOwner | undefined;
  try {
    holder = JSON.parse(readFileSync(claim, 'utf8')) as RunOwner;
  } catch {
    holder = undefined;
  }
  if (holder && ownerAliveHere(holder) && !isThisProcess(holder)) throw stillRunning(runId, holder);
  writeFileSync(claim, mine);
}

/**
 * An unreadable journal line may have recorded a submission: without it, the item looks never
 * sent and a resume would pay for it again. So a resume goes on over damage only when told to.
 */
function checkJournalDamage(
  runId: string,
  state: ReplayedState,
  options: RunOptions,
  environment: SessionEnvironment,
): void {
  if (state.unacceptedDamage.length === 0) return;
  const lines = describeLines(state.unacceptedDamage);
  if (!options.force) {
    throw new UsageError(
      `the journal of run ${runId} has ${lines} that could not be read; they may have recorded submitted (paid) tasks, ` +
        "which a resume would submit again. Check the team's tasks, then resume with --force to go on from what could be read",
    );
  }
  environment.warn(
    `warning: --force: ${lines} of the journal could not be read; items not known to be submitted will be submitted`,
  );
}

/**
 * The recipe copy kept in the run folder, analyzed as if it stood at the original recipe's path
 * and the run were started from the same folder: its relative paths still find the user's files.
 */
function analyzeKeptRecipe(paths: RunPaths, kept: string, state: ReplayedState, environment: SessionEnvironment): Plan {
  const batchText = state.batch ? readFileSync(state.batch, 'utf8') : undefined;
  const batch =
    state.batch && batchText !== undefined ? { path: state.batchSource ?? state.batch, text: batchText } : undefined;
  const loaded = analyze(
    {
      path: state.recipePath,
      text: kept,
      cwd: state.cwd ?? environment.cwd,
      ...(state.sets.length ? { sets: state.sets } : {}),
      ...(batch ? { batch } : {}),
      ...(state.skippedRows ? { skipInvalidRows: true } : {}),
    },
    analyzerDeps(offlineSchemas(environment.home)),
  );
  if (!loaded.ok) {
    throw new InvalidRecipe(
      `the recipe kept in ${shownPath(paths.recipe, environment.cwd)} no longer analyzes; the run cannot be resumed`,
      loaded.error,
    );
  }
  return loaded.value;
}

/**
 * The rows the run had: from its journal, or for a batch read again from the kept batch file, which
 * must give them back row for row (a model schema updated since may now reject a row, and every
 * row after it would be taken for another).
 */
function keptRows(runId: string, plan: Plan, state: ReplayedState): Plan {
  if (state.rows) return { ...plan, rows: state.rows };
  if (plan.rows.length === state.rowCount && rowsDigest(plan.rows) === state.rowsSha256) return plan;
  throw new UsageError(
    `run ${runId} cannot be resumed: its batch file, read again, gives ${plan.rows.length.toLocaleString('en-US')} rows that are not the ${state.rowCount.toLocaleString('en-US')} the run started with ` +
      '(a model schema or a local file it reads may have changed since)',
  );
}

/**
 * A resume runs the recipe the run kept: an edit made since (a fix of the prompt that failed) is not
 * in it, and a user who made one should hear so before the run goes on without it.
 */
function warnOfEditedRecipe(
  paths: RunPaths,
  kept: string,
  state: ReplayedState,
  environment: SessionEnvironment,
): void {
  const original = resolve(state.cwd ?? environment.cwd, state.recipePath);
  let now: string;
  try {
    now = readFileSync(original, 'utf8');
  } catch {
    return; // Moved or deleted: the kept copy is all there is.
  }
  if (now === kept) return;
  environment.warn(
    `warning: ${shownPath(original, environment.cwd)} changed since run ${state.runId} started; ` +
      `resume runs the recipe the run kept (${shownPath(paths.recipe, environment.cwd)}), without the changes. ` +
      'To run the changed recipe, start a new run: the step cache serves the steps it did not change',
  );
}

/** Items made from a file's old bytes and items made from its new bytes would not belong together. */
function checkLocalFiles(state: ReplayedState, options: RunOptions, environment: SessionEnvironment): void {
  const changed = changedFiles(state.localFiles);
  if (changed.length === 0) return;
  const list = changed.map((path) => shownPath(path, environment.cwd)).join(', ');
  if (!options.force)
    throw new UsageError(
      `local files changed since the run started: ${list}. Resume with --force to use them as they are now`,
    );
  environment.warn(`warning: --force: local files changed since the run started: ${list}`);
}
