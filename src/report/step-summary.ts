/** GitHub refuses a step summary over 1 MiB; this leaves room for what other steps wrote. */
export const SUMMARY_LIMIT_BYTES = 1024 * 1024 - 16 * 1024;

export interface SummaryStepRow {
  step: string;
  status: string;
  ran: number;
  cached: number;
  failed: number;
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
  /** Output files, as they should be shown (relative paths). */
  files: string[];
  failures: Array<{ step: string; message: string }>;
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

/**
 * The Markdown a run appends to `$GITHUB_STEP_SUMMARY`: status and duration, one table row per
 * step, the output files, each failure's message. Lists are cut to keep the whole under the limit.
 */
export function stepSummaryMarkdown(report: RunReport, limit = SUMMARY_LIMIT_BYTES): string {
  const mark = report.status === 'succeeded' ? '✅' : report.status === 'failed' ? '❌' : '⏸️';
  const duration = report.durationMs === null ? '' : ` in ${(report.durationMs / 1000).toFixed(1)} s`;
  const head = [
    `## ${mark} ${cell(report.name, 200)}: ${report.status}${duration}`,
    '',
    `Run \`${cell(report.runId, 200)}\``,
    '',
  ];
  const tableHead = [
    '| Step | Status | Ran | Cached | Failed | Tasks | Requests | 429s |',
    '|---|---|--:|--:|--:|--:|--:|--:|',
  ];
  const rows = report.steps.map((s) => {
    const counts = [s.ran, s.cached, s.failed, s.tasks, s.requests, s.rateLimited];
    return `| ${cell(s.step)} | ${s.status} | ${counts.join(' | ')} |`;
  });
  const files = report.files.map((f) => `- \`${cell(f).replaceAll('`', "'")}\``);
  const failures = report.failures.map((f) => `- **${cell(f.step, 200)}**: ${cell(f.message, 2000)}`);
  // The table gets at most half; files and failures share what is left.
  const fixed = bytes(head.join('\n')) + bytes(tableHead.join('\n')) + 200;
  const room = Math.max(0, limit - fixed);
  const table = fitting(rows, Math.floor(room / 2), 'steps');
  const left = room - bytes(table.join('\n'));
  const parts = [...head, ...tableHead, ...table, ''];
  if (failures.length > 0) parts.push('### Failures', '', ...fitting(failures, Math.floor(left / 2), 'failures'), '');
  if (files.length > 0) parts.push('### Outputs', '', ...fitting(files, Math.floor(left / 2), 'files'), '');
  return `${parts.join('\n')}\n`;
}
