import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { continued, describeItems } from './item-lines.js';
import { formatDuration } from '../duration.js';
import { describeLines } from '../store/journal.js';
import type { UnreadableJournal } from '../store/fold.js';
import type { Result } from '../result.js';
import { listRunIds, runPaths } from '../store/run-store.js';
import { fileCount, notListedLine, summariseJournalFile, type RunSummary } from '../store/summary.js';
import { UsageError } from './errors.js';
import { printJson, printLine, printTable, shown } from './output.js';
import { pipelineHome } from './pipeline-home.js';
import { formatUsd } from '../model-schemas/prices.js';
import { spendFigures } from '../store/summary.js';
import { resolveRunId, RUN_ID_HELP } from './run-id.js';
import { itemLabel } from '../item-label.js';
import { cliIo } from './io.js';
import { plural } from '../format.js';

/** Cancelled steps named with their reason; a stopped batch can have thousands. */
const LISTED_CANCELLED = 20;

/** `bg[0], bg[2] from the cache`: the items a step did not run, named as the console names them. */
const cachedItems = (step: string, indexes: number[]) =>
  `${[...indexes]
    .sort((a, b) => a - b)
    .map((index) => itemLabel({ step, index }))
    .join(', ')} from the cache`;

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

function load(home: string, id: string): Result<RunSummary, UnreadableJournal> {
  return summariseJournalFile(runPaths(home, id).journal);
}

/**
 * What the step cache saved a run, as its run.json says once it has ended (the journal names the
 * items served, not the misses): none for a run that has not ended, or was killed.
 */
function cacheOfEndedRun(home: string, id: string): { cache?: unknown } {
  try {
    const { cache } = JSON.parse(readFileSync(runPaths(home, id).summary, 'utf8')) as { cache?: unknown };
    return cache === undefined ? {} : { cache };
  } catch {
    return {};
  }
}

/** A run whose journal cannot be read still has a line in the list, so that the others stay visible. */
type Listed = { ok: true; value: RunSummary } | { ok: false; id: string; problem: string };

function listed(home: string, id: string): Listed {
  const loaded = load(home, id);
  return loaded.ok ? loaded : { ok: false, id, problem: loaded.error.message };
}

function listJson(runs: Listed[]): unknown[] {
  return runs.map((run) => {
    if (!run.ok) return { run_id: run.id, status: 'unreadable', problem: run.problem };
    const { steps: _steps, outputs: _outputs, files: _files, ...rest } = run.value;
    return { ...rest, files: fileCount(run.value), spent_usd: run.value.cost.committed_usd };
  });
}

function listRow(run: Listed): Array<string | number> {
  if (!run.ok) return [run.id, 'unreadable', '', '', '', '', ''];
  const s = run.value;
  const took = s.duration_ms === null ? '' : formatDuration(s.duration_ms);
  // A step skipped by its `if` is done as the recipe meant it: only failed or unfinished steps are missing.
  // The steps and files of a batch's rows past those listed are counted in not_listed (they succeeded).
  const unlisted = s.not_listed?.steps ?? 0;
  const done = s.steps.filter((x) => x.status === 'succeeded' || x.status === 'skipped').length + unlisted;
  const steps = `${done}/${s.steps.length + unlisted}`;
  return [s.run_id, s.status, when(s.started_at), took, steps, formatUsd(s.cost.committed_usd), fileCount(s)];
}

export function registerRunsCommand(program: Command): void {
  const runs = program
    .command('runs')
    .description('Runs kept in $PIPELINE_HOME/runs: their status, steps, tasks, timings and outputs.');

  runs
    .command('list')
    .description('List runs, newest first.')
    .option('--json', 'print JSON')
    .action((flags: { json?: boolean }) => {
      const home = pipelineHome();
      const runs = listRunIds(home).map((id) => listed(home, id));
      if (flags.json) return printJson(listJson(runs));
      if (runs.length === 0) return printLine(`no runs in ${shown(home)}/runs`);
      printTable(['RUN', 'STATUS', 'STARTED', 'TOOK', 'STEPS', 'SPENT', 'FILES'], runs.map(listRow));
      for (const run of runs) {
        if (!run.ok) cliIo().stderr.write(`run ${run.id} is unreadable: ${run.problem}\n`);
        else if (run.value.damaged_lines.length > 0)
          cliIo().stderr.write(
            `run ${run.value.run_id}: ${describeLines(run.value.damaged_lines)} of its journal could not be read\n`,
          );
      }
    });

  runs
    .command('show')
    .description("Show a run's steps with their tasks and timings, its failures and its outputs.")
    .argument('<run_id>', RUN_ID_HELP)
    .option('--json', 'print JSON')
    .action((name: string, flags: { json?: boolean }) => {
      const home = pipelineHome();
      const id = resolveRunId(home, name);
      const loaded = load(home, id);
      if (!loaded.ok) throw new UsageError(`run ${id} cannot be shown: ${loaded.error.message}`);
      const summary = loaded.value;
      if (flags.json) return printJson({ ...summary, ...cacheOfEndedRun(home, id) });
      const paths = runPaths(home, id);
      printLine(`run      ${summary.run_id}`);
      printLine(`recipe   ${summary.recipe}`);
      printLine(
        `status   ${summary.status}${summary.duration_ms === null ? '' : ` in ${formatDuration(summary.duration_ms)}`}`,
      );
      printLine(`started  ${when(summary.started_at)}`);
      printLine(`folder   ${shown(paths.dir)}`);
      printLine(`spent    ${spendFigures(summary.cost)}`);
      if (summary.damaged_lines.length > 0)
        printLine(`journal  ${describeLines(summary.damaged_lines)} could not be read`);
      const leftOut = [...new Set(summary.skipped_rows.map((s) => s.where))];
      if (leftOut.length > 0) printLine(`left out ${leftOut.length} rows (--skip-invalid-rows): ${leftOut.join(', ')}`);
      printLine();
      printTable(
        ['STEP', 'STATUS', 'TOOK', 'TASKS'],
        summary.steps.map((s) => [
          `${summary.rows > 1 ? `row ${s.row + 1} ` : ''}${s.step}`,
          `${s.continued ? 'failed (continued)' : s.status}${s.skipped_items?.length ? ` (${plural(s.skipped_items.length, 'item')} skipped)` : ''}`,
          s.duration_ms === null ? '' : formatDuration(s.duration_ms),
          [
            ...s.tasks.map((t) => `${t.task_id}${t.status ? ` (${t.status})` : ' (in flight)'}`),
            ...(s.cached.length > 0 ? [cachedItems(s.step, s.cached)] : []),
          ].join(', '),
        ]),
      );
      // One line per reason: a stopped batch had a line per row saying the same.
      const cancelled = new Map<string, typeof summary.steps>();
      for (const step of summary.steps)
        if (step.status === 'cancelled' && step.cancelled_because) {
          const same = cancelled.get(step.cancelled_because);
          if (same) same.push(step);
          else cancelled.set(step.cancelled_because, [step]);
        }
      if (cancelled.size > 0) printLine();
      for (const [reason, steps] of cancelled) {
        const inOrder = [...steps].sort((a, b) => a.row - b.row);
        const named = inOrder.slice(0, LISTED_CANCELLED).map((step) => itemLabel(step, summary.rows));
        const more = steps.length > LISTED_CANCELLED ? ` and ${steps.length - LISTED_CANCELLED} more` : '';
        printLine(`${named.join(', ')}${more} cancelled: ${reason}`);
      }
      const failed = summary.steps.filter((s) => s.error);
      if (failed.length > 0) {
        printLine();
        for (const step of failed)
          printLine(
            `${itemLabel(step, summary.rows)} failed (${step.error!.reason}${step.error!.outcome_unknown && step.error!.reason !== 'outcome-unknown' ? ', outcome unknown' : ''}${step.continued ? ', continued' : ''}): ${continued(step.error!.message)}`,
          );
      }
      const items = describeItems(summary.steps, summary.rows);
      if (items.length > 0) {
        printLine();
        for (const line of items) printLine(line);
      }
      if (summary.files.length > 0) {
        printLine();
        printLine('outputs');
        for (const file of summary.files) printLine(`  ${shown(file.path)}  (${file.bytes} bytes)`);
      }
      const notListed = notListedLine(summary);
      if (notListed) {
        printLine();
        printLine(notListed);
      }
    });
}
