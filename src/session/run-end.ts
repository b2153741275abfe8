// The end of a run, apart from what is printed: its last journal line, run.json, the report, and
// the copy of its outputs.
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { RunResult } from '../engine/engine.js';
import { copyOutputs } from '../engine/out-dir.js';
import type { CacheCounts } from '../engine/run-cache.js';
import { hasOutputs, isBatch, type Plan } from '../plan.js';
import type { Journal } from '../store/journal.js';
import { type RunPaths, writeAtomically } from '../store/run-store.js';
import type { JournalFold } from '../store/fold.js';
import { type RunSummary, summariseFold, summariseJournalFile } from '../store/summary.js';

export const reportPathOf = (paths: RunPaths) => join(paths.dir, 'report.html');

/** run.json: the journal's summary, and what the step cache saved. */
export type EndedSummary = RunSummary & { cache: CacheCounts & { enabled: boolean } };

/** A run's end as it was written down. */
export interface RunEnd {
  summary: EndedSummary;
  /** The report written, if one was (none with `report: false`, or when it could not be made). */
  reportPath: string | undefined;
  /** The copies made in `out` (a run that succeeded only). */
  copied: string[];
}

/** The report every run writes as it ends; a report that cannot be made never fails the run. */
async function writeRunReport(paths: RunPaths, log: Logger, warn: (text: string) => void): Promise<string | undefined> {
  try {
    // Imported on use: the report's modules (an image library among them) would slow every command's start.
    const { writeReport } = await import('../report/write-report.js');
    const written = await writeReport(paths.journal, reportPathOf(paths));
    if (!written.ok) throw new Error(written.error.message);
    return written.value.path;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.warn({ error: message }, 'report not written');
    warn(`warning: the report of run ${paths.id} could not be written: ${message}`);
    return undefined;
  }
}

/** Ends the run's journal, writes run.json and the report, copies the outputs to `out`. */
export async function endRun(
  run: { result: RunResult; plan: Plan; paths: RunPaths; journal: Journal; log: Logger; summary?: JournalFold },
  options: { report?: boolean; out?: string; cwd: string; warn: (text: string) => void },
  cacheCounts: CacheCounts | undefined,
): Promise<RunEnd> {
  const { result, plan, paths, journal, log } = run;
  const outputs = result.outputs;
  if (result.status === 'interrupted') journal.append({ type: 'run-interrupted' });
  else if (!hasOutputs(plan))
    // Nothing to say by row: a list of a million `{}` took the fold of run.json 61 MB to read back.
    journal.append({ type: 'run-finished', status: result.status });
  else
    journal.append({
      type: 'run-finished',
      status: result.status,
      outputs: isBatch(plan.rows) ? outputs : outputs[0],
    });
  journal.close();
  const summarised = run.summary ? summariseFold(run.summary) : summariseJournalFile(paths.journal);
  if (!summarised.ok)
    throw new Error(`Internal error: the journal of a run that just ran is unreadable: ${summarised.error.message}`);
  const cacheSummary = cacheCounts ?? { hits: 0, misses: 0, tasks_saved: 0, requests_saved: 0 };
  const summary = { ...summarised.value, cache: { enabled: cacheCounts !== undefined, ...cacheSummary } };
  writeAtomically(paths.summary, `${JSON.stringify(summary, null, 2)}\n`);
  log.info({ status: result.status }, 'run ended');
  const reportPath = options.report !== false ? await writeRunReport(paths, log, options.warn) : undefined;
  const copied =
    options.out && result.status === 'succeeded'
      ? await copyOutputs(resolve(options.cwd, options.out), outputs, isBatch(plan.rows))
      : [];
  return { summary, reportPath, copied };
}
