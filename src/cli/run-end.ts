// The end of a run: its last journal line, run.json and the report, what it prints, the copy to
// `--out`, and what GitHub Actions shows.
import { describeItems } from './item-lines.js';
import { relative } from 'node:path';
import type pino from 'pino';
import type { CacheCounts } from '../engine/run-cache.js';
import type { RunResult } from '../engine/engine.js';
import { copyOutputs } from '../engine/out-dir.js';
import type { Plan } from '../plan.js';
import { readJournalFile, type Journal } from '../store/journal.js';
import { writeAtomically, type RunPaths } from '../store/run-store.js';
import { summariseJournal } from '../store/summary.js';
import { writeRunReport } from './report.js';
import { appendStepSummary, printAnnotations, type RunEnd, runReport } from './github-actions.js';
import type { FailedStepAnnotations } from '../report/failed-step-annotations.js';
import { rateLimitedPhrase } from '../report/step-summary.js';
import { commandName } from './invocation.js';
import { printJson, printLine, shown } from './output.js';
import { spentPhrase, writeMoneyAdvice } from './run-money.js';
import type { StepSummary } from '../store/summary.js';
import { resumeCommand } from './resume-hint.js';
import { cliIo, fromCwd } from './io.js';
import type { RunFlags } from './run-flags.js';

/** One line for every step that never ran: after a stop they can be thousands. */
function cancelledLine(steps: StepSummary[], rows: number): string {
  const cancelled = steps.filter((s) => s.status === 'cancelled');
  if (cancelled.length === 0) return '';
  const names = [...new Set(cancelled.map((s) => s.step))];
  const shownNames = names.length > 5 ? `${names.slice(0, 5).join(', ')}…` : names.join(', ');
  const inRows = rows > 1 ? ` in ${new Set(cancelled.map((s) => s.row)).size} rows` : '';
  return `${cancelled.length} step${cancelled.length === 1 ? '' : 's'}${inRows} cancelled: ${shownNames}`;
}

/** The exit code of a run that ended (130, interrupted, is answered before these). */
const EXIT_CODES = { succeeded: 0, failed: 1, stopped: 3, interrupted: 130 } as const;

/** Ends the run's journal, writes run.json and the report, prints the outcome; answers the exit code, the summary and the copies. */
export async function finish(
  result: RunResult,
  plan: Plan,
  flags: RunFlags,
  paths: RunPaths,
  journal: Journal,
  log: pino.Logger,
  cacheCounts: CacheCounts | undefined,
  rateLimited: number,
): Promise<{ code: number; summary: RunEnd['summary']; copied: string[] }> {
  const outputs = result.rows.map((row) => row.outputs);
  if (result.status === 'interrupted') journal.append({ type: 'run-interrupted' });
  else
    journal.append({
      type: 'run-finished',
      status: result.status,
      outputs: plan.rows.length > 1 ? outputs : outputs[0],
    });
  journal.close();
  const summarised = summariseJournal(readJournalFile(paths.journal));
  if (!summarised.ok)
    throw new Error(`Internal error: the journal of a run that just ran is unreadable: ${summarised.error.message}`);
  const cacheSummary = cacheCounts ?? { hits: 0, misses: 0, tasks_saved: 0, requests_saved: 0 };
  const summary = { ...summarised.value, cache: { enabled: cacheCounts !== undefined, ...cacheSummary } };
  writeAtomically(paths.summary, `${JSON.stringify(summary, null, 2)}\n`);
  log.info({ status: result.status }, 'run ended');
  if (flags.report !== false) await writeRunReport(paths, log);
  const copied = flags.out && result.status === 'succeeded' ? await copyOutputs(fromCwd(flags.out), outputs) : [];
  const cancelled = cancelledLine(summary.steps, plan.rows.length);
  // The live view shows the 429s as they come; plain output (CI, pipes) says them in the last line.
  const limited = rateLimited > 0 ? `; ${rateLimitedPhrase(rateLimited)}` : '';
  if (result.status === 'interrupted') {
    cliIo().stderr.write(
      `\n${spentPhrase(summary.cost)}${limited}\nStopped.${cancelled ? ` ${cancelled}.` : ''} Resume with:\n  ${resumeCommand(paths.id, flags)}\n`,
    );
    return { code: 130, summary, copied };
  }
  const seconds = summary.duration_ms === null ? '' : ` in ${(summary.duration_ms / 1000).toFixed(1)}s`;
  cliIo().stderr.write(
    `\n${result.status === 'succeeded' ? '✓' : '✗'} run ${paths.id} ${result.status}${seconds}, ${spentPhrase(summary.cost)}${limited}\n`,
  );
  writeMoneyAdvice(summary, paths.id, flags);
  if (flags.json) {
    // The items that failed or did not run, named on stderr as without --json; stdout stays JSON.
    for (const line of describeItems(summary.steps, plan.rows.length)) cliIo().stderr.write(`  ${line}\n`);
    printJson({
      run_id: paths.id,
      status: result.status,
      run_dir: paths.dir,
      outputs_dir: paths.outputs,
      outputs: plan.rows.length > 1 ? outputs : outputs[0],
      files: summary.files.map((f) => f.path),
      copied,
      cache: summary.cache,
      skipped_rows: summary.skipped_rows,
      // Each step's end; `items_from`: item i of the step comes from item i of that step.
      steps: summary.steps.map((s) => ({
        ...(plan.rows.length > 1 ? { row: s.row } : {}),
        step: s.step,
        status: s.status,
        ...(s.items_from !== undefined ? { items_from: s.items_from } : {}),
        ...(s.failed_items ? { failed_items: s.failed_items } : {}),
        ...(s.skipped_items ? { skipped_items: s.skipped_items } : {}),
      })),
    });
  } else {
    if (summary.files.length > 0) {
      printLine(`outputs in ${shown(paths.outputs)}:`);
      for (const file of summary.files) printLine(`  ${relative(paths.outputs, file.path)}  (${file.bytes} bytes)`);
    }
    if (copied.length > 0)
      printLine(`copied to ${shown(flags.out!)}: ${copied.map((p) => relative(fromCwd(flags.out!), p)).join(', ')}`);
    const failed = summary.steps.filter((s) => s.status === 'failed');
    for (const step of failed)
      cliIo().stderr.write(
        `  ${step.step}: ${step.error?.message ?? 'failed'}${step.continued ? ' (continued)' : ''}\n`,
      );
    if (cancelled) cliIo().stderr.write(`  ${cancelled}\n`);
    const items = describeItems(summary.steps, plan.rows.length);
    for (const line of items) cliIo().stderr.write(`  ${line}\n`);
    if (failed.length > 0 || cancelled || items.length > 0)
      cliIo().stderr.write(`Details: ${commandName()} runs show ${paths.id}\n`);
  }
  return { code: EXIT_CODES[result.status], summary, copied };
}

export /** With GITHUB_ACTIONS=true: each failed step as an error at its line; the run's summary for the job page. */
function reportToGitHub(plan: Plan, result: RunResult, failed: FailedStepAnnotations, end: RunEnd): void {
  if (!cliIo().env.GITHUB_STEP_SUMMARY && !cliIo().env.GITHUB_ACTIONS) return;
  printAnnotations(failed.annotations());
  appendStepSummary(runReport(plan, result, end));
}
