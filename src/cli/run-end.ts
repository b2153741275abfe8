// The end of a run as the command line shows it: what it prints, and what GitHub Actions shows.
// The session wrote its last journal line, run.json, the report and the copy to `--out`.
import { itemLabel } from '../item-label.js';
import { continued, describeItems } from './item-lines.js';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { RunResult } from '../engine/engine.js';
import { RUN_STOPPED } from '../engine/failure.js';
import { hasOutputs, isBatch, type Plan } from '../plan.js';
import type { SessionRun } from '../session/run.js';
import { fileCount, notListedLine, type RunSummary, spendFigures, summariseJournalFile } from '../store/summary.js';
import { runPaths } from '../store/run-store.js';
import { appendStepSummary, printAnnotations, type RunEnd, runReport } from './github-actions.js';
import type { Annotation } from '../report/github-commands.js';
import { rateLimitedPhrase } from '../report/step-summary.js';
import { commandName } from './invocation.js';
import { printJson, printLine, shown } from './output.js';
import { spentPhrase, writeMoneyAdvice } from './run-money.js';
import type { StepSummary } from '../store/summary.js';
import { resumeCommand, resumeInCiNote } from './resume-hint.js';
import { cliIo, fromCwd } from './io.js';
import type { RunFlags } from './run-flags.js';
import { plural } from '../format.js';

/** One line for every step that never ran: after a stop they can be thousands. */
function cancelledLine(steps: StepSummary[], rows: number): string {
  const cancelled = steps.filter((s) => s.status === 'cancelled');
  if (cancelled.length === 0) return '';
  const names = [...new Set(cancelled.map((s) => s.step))];
  // One row: each step with its reason (`branded (it needs hero, which failed)`); a batch, the names.
  const why = (name: string) => {
    const reason = rows === 1 ? cancelled.find((s) => s.step === name)?.cancelled_because : undefined;
    return reason && reason !== RUN_STOPPED ? `${name} (${reason})` : name;
  };
  const shownNames = names.length > 5 ? `${names.slice(0, 5).map(why).join(', ')}…` : names.map(why).join(', ');
  // A batch names its rows too, the first ten, in order: `runs show` names each step of each.
  const inRowsOf = [...new Set(cancelled.map((s) => s.row + 1))].sort((a, b) => a - b);
  const listed = `${inRowsOf.slice(0, 10).join(', ')}${inRowsOf.length > 10 ? ', …' : ''}`;
  const inRows = rows > 1 ? ` in ${plural(inRowsOf.length, 'row')}` : '';
  const which = rows > 1 ? ` (${inRowsOf.length === 1 ? 'row' : 'rows'} ${listed})` : '';
  return `${plural(cancelled.length, 'step')}${inRows} cancelled: ${shownNames}${which}`;
}

/** The output files a run's end lists on the console; `runs show` lists them all. */
const LISTED_FILES = 20;

/** The exit code of a run that ended (130, interrupted, is answered before these). */
const EXIT_CODES = { succeeded: 0, failed: 1, stopped: 3, interrupted: 130 } as const;

/** What `--json` prints on stdout at a run's end: its id, status, outputs and each step's end. */
function runJson(run: SessionRun): Record<string, unknown> {
  const { plan, summary, copied, runId: id } = run;
  const outputs = run.result.outputs;
  return {
    run_id: id,
    status: run.status,
    run_dir: run.runDir,
    outputs_dir: run.outputsDir,
    outputs: isBatch(plan.rows) ? outputs : outputs[0],
    copied,
    cache: summary.cache,
    ...journalJson(summary, isBatch(plan.rows)),
  };
}

/** What `--json` prints of a run that its journal tells: files, rows left out, each step's end. */
function journalJson(summary: RunSummary, batch: boolean): Record<string, unknown> {
  return {
    files: summary.files.map((f) => f.path),
    skipped_rows: summary.skipped_rows,
    // Each step's end; `items_from`: item i of the step comes from item i of that step.
    steps: summary.steps.map((s) => ({
      ...(batch ? { row: s.row } : {}),
      step: s.step,
      status: s.status,
      ...(s.continued ? { continued: true } : {}),
      ...(s.items_from !== undefined ? { items_from: s.items_from } : {}),
      ...(s.failed_items ? { failed_items: s.failed_items } : {}),
      ...(s.skipped_items ? { skipped_items: s.skipped_items } : {}),
    })),
    // A batch past LISTED_ROWS rows: its later rows' files and succeeded steps, counted.
    ...(summary.not_listed ? { not_listed: summary.not_listed } : {}),
  };
}

/**
 * `resume --json` of a run that had succeeded: the run as `run --json` gave it at its end, from its
 * journal, and `resumed: false` (a script reading stdout had got a line of text).
 */
export function alreadySucceededJson(home: string, runId: string, fromBatchFile: boolean): Record<string, unknown> {
  const paths = runPaths(home, runId);
  const read = summariseJournalFile(paths.journal);
  if (!read.ok) return { run_id: runId, status: 'succeeded', resumed: false };
  const summary = read.value;
  const batch = summary.rows > 1 || fromBatchFile;
  return {
    run_id: runId,
    status: 'succeeded',
    resumed: false,
    run_dir: paths.dir,
    outputs_dir: paths.outputs,
    outputs: summary.outputs,
    ...journalJson(summary, batch),
  };
}

/** Prints how a session's run ended; answers the exit code. */
export function printRunEnd(run: SessionRun, flags: RunFlags): number {
  const { plan, summary, copied, runId: id } = run;
  const rateLimited = run.rateLimited;
  if (run.reportPath) cliIo().stderr.write(`report: ${shown(run.reportPath)}\n`);
  const cancelled = cancelledLine(summary.steps, plan.rows.length);
  // The live view shows the 429s as they come; plain output (CI, pipes) says them in the last line.
  const limited = rateLimited > 0 ? `; ${rateLimitedPhrase(rateLimited)}` : '';
  if (run.status === 'interrupted') {
    cliIo().stderr.write(
      `\n${spentPhrase(summary.cost)}${limited}\nStopped.${cancelled ? ` ${cancelled}.` : ''} Resume with:\n  ${resumeCommand(id, flags)}\n${resumeInCiNote(cliIo().env)}`,
    );
    // A wrapper reading stdout learns the run's id and what it got to before the stop.
    if (flags.json) printJson(runJson(run));
    return 130;
  }
  const seconds = summary.duration_ms === null ? '' : ` in ${(summary.duration_ms / 1000).toFixed(1)}s`;
  cliIo().stderr.write(
    `\n${run.status === 'succeeded' ? '✓' : '✗'} run ${id} ${run.status}${seconds}, ${spentPhrase(summary.cost)}${limited}\n`,
  );
  writeMoneyAdvice(summary, id, flags);
  // Copied only from a run that succeeded: a batch with one bad row would otherwise leave a half set.
  if (flags.out && run.status !== 'succeeded')
    cliIo().stderr.write(
      `--out: nothing was copied to ${shown(flags.out)}: outputs are copied when the run succeeds (${resumeCommand(id, flags)} runs again what did not); the files made so far are in ${shown(run.outputsDir)}\n`,
    );
  if (flags.json) {
    // The items that failed or did not run, named on stderr as without --json; stdout stays JSON.
    if (cancelled) cliIo().stderr.write(`  ${cancelled}\n`);
    for (const line of describeItems(summary.steps, plan.rows.length)) cliIo().stderr.write(`  ${line}\n`);
    printJson(runJson(run));
  } else {
    if (summary.files.length > 0) {
      printLine(`outputs in ${shown(run.outputsDir)}:`);
      // A batch's thousand files would bury the run's last lines: the first few, then a count.
      for (const file of summary.files.slice(0, LISTED_FILES))
        printLine(`  ${relative(run.outputsDir, file.path)}  (${file.bytes} bytes)`);
      const more = fileCount(summary) - Math.min(summary.files.length, LISTED_FILES);
      if (more > 0) printLine(`  … and ${plural(more, 'more file')}: ${commandName()} runs show ${id} lists them`);
    } else {
      const notListed = notListedLine(summary);
      if (notListed) printLine(`  ${notListed}`);
    }
    if (copied.length > 0) {
      printLine(`copied to ${shown(flags.out!)}: ${copied.map((p) => relative(fromCwd(flags.out!), p)).join(', ')}`);
      const stale = filesNotWritten(fromCwd(flags.out!), copied);
      if (stale.length > 0)
        cliIo().stderr.write(
          `--out: ${shown(flags.out!)} also holds ${plural(stale.length, 'file')} this run did not write, left as ${stale.length === 1 ? 'it was' : 'they were'}: ` +
            `${stale.slice(0, LISTED_FILES).join(', ')}${stale.length > LISTED_FILES ? ', …' : ''}. Empty the folder first if only this run's outputs should be there\n`,
        );
    }
    // --out copies the recipe's `outputs:`: with none, it says so rather than leave the folder empty.
    else if (flags.out && run.status === 'succeeded' && !hasOutputs(plan))
      cliIo().stderr.write(
        `--out: the recipe has no outputs: section, so nothing was copied to ${shown(flags.out)}; its files are in ${shown(run.outputsDir)}\n`,
      );

    const failed = summary.steps.filter((s) => s.status === 'failed');
    // A step whose items failed is told by its items' lines below, unless it continued (its line says
    // so); the others here, by row in a batch.
    for (const step of failed)
      if (!step.failed_items?.length || step.continued)
        cliIo().stderr.write(
          `  ${itemLabel(step, plan.rows.length)}: ${continued(step.error?.message ?? 'failed')}${step.continued ? ' (continued)' : ''}\n`,
        );
    if (cancelled) cliIo().stderr.write(`  ${cancelled}\n`);
    const items = describeItems(summary.steps, plan.rows.length);
    for (const line of items) cliIo().stderr.write(`  ${line}\n`);
    if (failed.length > 0 || cancelled || items.length > 0)
      cliIo().stderr.write(`Details: ${commandName()} runs show ${id}\n`);
  }
  return EXIT_CODES[run.status];
}

/** With GITHUB_ACTIONS=true: each failed step as an error at its line; the run's summary for the job page. */
export function reportRunToGitHub(run: SessionRun, flags: RunFlags): void {
  const out = flags.out ? { dir: fromCwd(flags.out), copied: run.copied } : undefined;
  reportToGitHub(run.plan, run.result, run.failedSteps, {
    summary: run.summary,
    counts: run.counts,
    spend: spendFigures(run.summary.cost),
    rateLimited: run.rateLimited,
    outputsDir: run.outputsDir,
    ...(out ? { out } : {}),
  });
}

/** With GITHUB_ACTIONS=true: each failed step as an error at its line; the run's summary for the job page. */
function reportToGitHub(plan: Plan, result: RunResult, failedSteps: Annotation[], end: RunEnd): void {
  if (!cliIo().env.GITHUB_STEP_SUMMARY && !cliIo().env.GITHUB_ACTIONS) return;
  printAnnotations(failedSteps);
  appendStepSummary(runReport(plan, result, end));
}

/**
 * Files in the --out folder that this run did not write (an earlier run's `images-3.png`, where this
 * one made two): copied outputs land beside them, and a CI job that publishes the folder would
 * publish them too. Relative to the folder, sorted.
 */
function filesNotWritten(dir: string, written: readonly string[]): string[] {
  const ours = new Set(written.map((path) => relative(dir, path)));
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
      .filter((path) => !ours.has(path))
      .sort();
  } catch {
    return [];
  }
}
