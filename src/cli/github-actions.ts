import { appendFileSync, existsSync } from 'node:fs';
import { relative } from 'node:path';
import type { RunResult } from '../engine/engine.js';
import { taskState } from '../gateway/types.js';
import { itemLabel } from '../item-label.js';
import { hasOutputs, type Plan } from '../plan.js';
import type { Diagnostic } from '../recipe/diagnostics.js';
import { type Annotation, annotationLines, workspacePath } from '../report/github-commands.js';
import { notRunMarkdown, type RunReport, stepSummaryMarkdown } from '../report/step-summary.js';
import { notListedLine, type RunSummary } from '../store/summary.js';
import { redact } from './output.js';
import { cliIo } from './io.js';

/** GitHub Actions sets GITHUB_ACTIONS=true in every step it runs. */
export const inGitHubActions = (env: NodeJS.ProcessEnv = cliIo().env) => env.GITHUB_ACTIONS === 'true';

/** Sources that are no file in the workspace: GitHub can annotate them only without a place. */
const NOT_A_FILE = new Set(['command line']);

export function diagnosticAnnotation(diagnostic: Diagnostic): Annotation {
  const { file, range } = diagnostic;
  const base: Annotation = { kind: diagnostic.severity, title: 'pipeline', message: diagnostic.message };
  if (NOT_A_FILE.has(file.path)) return { ...base, message: `${file.path}: ${diagnostic.message}` };
  const start = file.position(range.start);
  const end = file.position(Math.max(range.start, range.end - 1));
  // GitHub reads col/endColumn only on one line; over several lines the lines alone say where.
  const columns = start.line === end.line ? { col: start.col, endColumn: end.col + 1 } : {};
  return { ...base, file: file.path, line: start.line, endLine: end.line, ...columns };
}

/**
 * Writes the workflow commands to stderr: the runner reads commands from both streams, and stdout
 * may be JSON that a later step parses.
 */
export function printAnnotations(annotations: Annotation[], env: NodeJS.ProcessEnv = cliIo().env): void {
  if (!inGitHubActions(env) || annotations.length === 0) return;
  const lines = annotationLines(annotations, env.GITHUB_WORKSPACE, cliIo().cwd);
  cliIo().stderr.write(`${lines.join('\n')}\n`);
}

export const annotateDiagnostics = (diagnostics: Diagnostic[]) =>
  printAnnotations(diagnostics.map(diagnosticAnnotation));

export interface StepCounts {
  cached: (stepKey: string) => number;
  traffic: (stepKey: string) => { requests: number; rateLimited: number } | undefined;
}

/** What the run's end knows beside its journal: the cache's counts, the 429s, and where the outputs went. */
export interface RunEnd {
  summary: RunSummary & { cache: { enabled: boolean; hits: number; requests_saved: number; tasks_saved: number } };
  counts: StepCounts;
  /** The spend beside the estimate, as the console's last line says it (run-money's spendFigures). */
  spend: string;
  rateLimited: number;
  outputsDir: string;
  /** `--out`, when given, and the files copied there (none unless the run succeeded). */
  out?: { dir: string; copied: string[] };
}

/** The environment variable the action sets to the name of the artifact it uploads the outputs and report to. */
export const REPORT_ARTIFACT_ENV = 'PIPELINE_REPORT_ARTIFACT';

/** A folder as the summary names it: relative to the workspace, ending in `/`. */
const folderShown = (dir: string, env: NodeJS.ProcessEnv) =>
  `${workspacePath(dir, env.GITHUB_WORKSPACE, cliIo().cwd).replace(/\/$/, '')}/`;

/**
 * The run as the step summary shows it: one table row per step (and row of a batch), and the
 * output files that exist: those `--out` copied after a success, else the run's own (a file the
 * journal names may be gone, and a failed run copies nothing to `--out`).
 */
export function runReport(plan: Plan, result: RunResult, end: RunEnd, env: NodeJS.ProcessEnv = cliIo().env) {
  const { summary, counts } = end;
  const copied = end.out && end.out.copied.length > 0;
  const filesDir = copied ? end.out!.dir : end.outputsDir;
  const paths = copied ? end.out!.copied : summary.files.map((f) => f.path);
  const artifact = env[REPORT_ARTIFACT_ENV];
  const report: RunReport = {
    name: plan.name,
    runId: summary.run_id,
    status: result.status,
    durationMs: summary.duration_ms,
    steps: [],
    spend: end.spend,
    cache: summary.cache.enabled
      ? { hits: summary.cache.hits, requestsSaved: summary.cache.requests_saved, tasksSaved: summary.cache.tasks_saved }
      : null,
    rateLimited: end.rateLimited,
    ...(artifact ? { artifact } : {}),
    files: paths.filter((path) => existsSync(path)).map((path) => relative(filesDir, path)),
    filesDir: folderShown(filesDir, env),
    ...(end.out && !copied ? { notCopiedTo: folderShown(end.out.dir, env) } : {}),
    ...(end.out && !copied && result.status === 'succeeded' && !hasOutputs(plan)
      ? { notCopiedBecause: 'the recipe has no `outputs:` section' }
      : {}),
    failures: [],
  };
  const notListed = notListedLine(summary);
  if (notListed) report.notListed = notListed;
  // One lookup per row's step, not a search of every record: a batch has thousands of rows.
  const records = new Map(summary.steps.map((s) => [`${s.row}/${s.step}`, s]));
  for (const [index, row] of result.rows.entries()) {
    for (const [id, outcome] of Object.entries(row.steps)) {
      const key = `${index}/${id}`;
      const name = itemLabel({ step: id, row: index }, plan.rows.length);
      const cached = counts.cached(key);
      const record = records.get(key);
      // A succeeded step of a row past those the summary lists: counted in `notListed`, not shown as 0 tasks.
      if (!record && notListed && outcome.status === 'succeeded') continue;
      const traffic = counts.traffic(key);
      report.steps.push({
        step: name,
        status: outcome.status,
        // A failed step reports no runs; the tasks it finished were made (and paid for) all the same.
        ran:
          outcome.status === 'failed'
            ? (record?.tasks.filter((t) => t.status !== null && taskState(t.status) === 'succeeded').length ?? 0)
            : Math.max(0, outcome.runs - cached),
        cached,
        failed: outcome.status === 'failed' ? 1 : 0,
        skipped: outcome.skippedItems?.length ?? 0,
        tasks: record?.tasks.length ?? 0,
        requests: traffic?.requests ?? 0,
        rateLimited: traffic?.rateLimited ?? 0,
      });
      if (outcome.status === 'failed')
        report.failures.push({ step: name, message: outcome.failure?.message ?? 'failed' });
    }
  }
  return report;
}

/** Appends `markdown` to $GITHUB_STEP_SUMMARY, when GitHub gave one; a failure to write is a warning. */
function appendSummary(markdown: string, env: NodeJS.ProcessEnv): void {
  const path = env.GITHUB_STEP_SUMMARY;
  if (!path) return;
  try {
    appendFileSync(path, redact(markdown));
  } catch (error) {
    cliIo().stderr.write(`warning: cannot append to GITHUB_STEP_SUMMARY (${path}): ${(error as Error).message}\n`);
  }
}

/** Appends the run's Markdown summary to $GITHUB_STEP_SUMMARY, when GitHub gave one. */
export function appendStepSummary(report: RunReport, env: NodeJS.ProcessEnv = cliIo().env): void {
  appendSummary(stepSummaryMarkdown(report), env);
}

/** A command that ran nothing (exit 2) says so in the job summary too, with the diagnostics it printed. */
export function appendNotRunSummary(
  target: string,
  message: string,
  details?: string,
  env: NodeJS.ProcessEnv = cliIo().env,
  exitCode = 2,
): void {
  appendSummary(notRunMarkdown(target, message, details, exitCode), env);
}
