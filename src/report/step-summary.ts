import { plural } from '../format.js';
/** GitHub refuses a step summary over 1 MiB; this leaves room for what other steps wrote. */
export const SUMMARY_LIMIT_BYTES = 1024 * 1024 - 16 * 1024;

export interface SummaryStepRow {
  step: string;
  status: string;
  ran: number;
  cached: number;
  failed: number;
  /** Items that did not run: their own `if` was false, or an item they come from failed. */
  skipped: number;
  tasks: number;
  requests: number;
  rateLimited: number;
}

export interface RunReport {
  name: string;
  runId: string;
  status: string;
  durationMs: number | null;
  steps: SummaryStepRow[];
  /** What the run committed beside its estimate, as the console says it: `$0.5200 of an estimated $0.5200`. */
  spend: string;
  /** Items the step cache served and the work they saved; null when the run did not use the cache. */
  cache: { hits: number; requestsSaved: number; tasksSaved: number } | null;
  /** Answers of 429 the run met, over all its requests. */
  rateLimited: number;
  /** The artifact that holds the outputs and report.html, when the workflow said which. */
  artifact?: string;
  /** Output files that exist, relative to `filesDir`. */
  files: string[];
  /** The folder `files` are in, as it should be shown (ending in `/`). */
  filesDir: string;
  /** `--out` was given and nothing was copied there: that folder, as shown. */
  notCopiedTo?: string;
  /** Why: the run did not succeed (the default), or the recipe has no `outputs:` to copy. */
  notCopiedBecause?: string;
  failures: Array<{ step: string; message: string }>;
  /** A batch past the rows the run's summary lists: what it counted instead, as one line. */
  notListed?: string;
}

/** A table cell: one line, pipes escaped, long text cut. */
export const cell = (text: string, max = 300): string => {
  const flat = text.replace(/\r?\n/g, ' ').replaceAll('|', '\\|');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Adds lines while they fit in `budget` bytes; then one line saying how many were left out. */
function fitting(lines: string[], budget: number, what: string): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const [index, line] of lines.entries()) {
    const note = `\n_…and ${lines.length - index} more ${what}_\n`;
    if (used + bytes(line) + 1 + bytes(note) > budget) return [...kept, note.trim()];
    kept.push(line);
    used += bytes(line) + 1;
  }
  return kept;
}

/** The count with `one` or `many`, for a phrase whose plural is not its noun's (`response was`). */
const phrase = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** `2 responses were 429 (rate limited)`, as the console's last line and the summary say it. */
export const rateLimitedPhrase = (count: number): string =>
  count === 0 ? 'no 429 (rate limited)' : `${phrase(count, 'response was', 'responses were')} 429 (rate limited)`;

/** The facts under the title: money, cache, rate limits, and where the outputs went. */
function factLines(report: RunReport): string[] {
  const cache = report.cache
    ? `${plural(report.cache.hits, 'hit')}, saving ${plural(report.cache.requestsSaved, 'request')} and ${plural(report.cache.tasksSaved, 'task')}`
    : 'off (--no-cache)';
  const lines = [
    `- **Spend:** ${cell(report.spend)}`,
    `- **Step cache:** ${cache}`,
    `- **Rate limits:** ${rateLimitedPhrase(report.rateLimited)}`,
  ];
  if (report.artifact)
    lines.push(`- **Artifact:** \`${cell(report.artifact, 200)}\` holds the outputs and report.html`);
  return [...lines, ''];
}

/** A folder or file name inside backticks. */
const code = (text: string) => `\`${cell(text).replaceAll('`', "'")}\``;

/**
 * The Markdown a run appends to `$GITHUB_STEP_SUMMARY`: status and duration, the spend, the cache
 * and the 429s, one table row per step, each failure's message, and the output files that exist,
 * named in the folder that holds them. Lists are cut to keep the whole under the limit.
 */
export function stepSummaryMarkdown(report: RunReport, limit = SUMMARY_LIMIT_BYTES): string {
  const mark = report.status === 'succeeded' ? '✅' : report.status === 'failed' ? '❌' : '⏸️';
  const duration = report.durationMs === null ? '' : ` in ${(report.durationMs / 1000).toFixed(1)} s`;
  const head = [
    `## ${mark} ${cell(report.name, 200)}: ${report.status}${duration}`,
    '',
    `Run \`${cell(report.runId, 200)}\``,
    '',
    ...factLines(report),
  ];
  const tableHead = [
    '| Step | Status | Ran | Cached | Failed | Skipped | Tasks | Requests | 429s |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const rows = report.steps.map((s) => {
    const counts = [s.ran, s.cached, s.failed, s.skipped, s.tasks, s.requests, s.rateLimited];
    return `| ${cell(s.step)} | ${s.status} | ${counts.join(' | ')} |`;
  });
  const files = report.files.map((f) => `- ${code(f)}`);
  const failures = report.failures.map((f) => `- **${cell(f.step, 200)}**: ${cell(f.message, 2000)}`);
  // The table gets at most half; files and failures share what is left.
  const fixed = bytes(head.join('\n')) + bytes(tableHead.join('\n')) + 200;
  const room = Math.max(0, limit - fixed);
  const table = fitting(rows, Math.floor(room / 2), 'steps');
  const left = room - bytes(table.join('\n'));
  const parts = [...head, ...tableHead, ...table, ''];
  if (report.notListed) parts.push(`_${cell(report.notListed, 500)}_`, '');
  if (failures.length > 0) parts.push('### Failures', '', ...fitting(failures, Math.floor(left / 2), 'failures'), '');
  if (report.notCopiedTo)
    parts.push(
      `Nothing was copied to ${code(report.notCopiedTo)}: ${report.notCopiedBecause ?? `the run ${report.status}`}.`,
      '',
    );
  if (files.length > 0)
    parts.push(`### Outputs in ${code(report.filesDir)}`, '', ...fitting(files, Math.floor(left / 2), 'files'), '');
  return `${parts.join('\n')}\n`;
}

/**
 * The Markdown of a command that ran nothing (exit 2): what it was given, why, and the
 * diagnostics as the console printed them, in a fence longer than any run of backticks in them.
 */
export function notRunMarkdown(target: string, message: string, details?: string, exitCode = 2): string {
  const lines = [`## ❌ ${cell(target, 200)}: not run (exit ${exitCode})`, '', cell(message, 2000), ''];
  if (details) {
    const longest = Math.max(0, ...[...details.matchAll(/`+/g)].map((m) => m[0].length));
    const fence = '`'.repeat(Math.max(3, longest + 1));
    // A long list of diagnostics is cut like the run's lists: the summary has a size limit.
    const text = bytes(details) > SUMMARY_LIMIT_BYTES / 2 ? `${details.slice(0, 100_000)}\n…` : details;
    lines.push(`${fence}text`, text, fence, '');
  }
  return `${lines.join('\n')}\n`;
}
