import type { Command } from 'commander';
import { formatDuration } from '../duration.js';
import { readJournal } from '../store/journal.js';
import { listRunIds, runExists, runPaths } from '../store/run-store.js';
import { summarise, type RunSummary } from '../store/summary.js';
import { UsageError } from './errors.js';
import { printJson, printLine, printTable } from './output.js';
import { pipelineHome } from './pipeline-home.js';
import { shown } from './run.js';

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

function load(home: string, id: string): RunSummary {
  return summarise(readJournal(runPaths(home, id).journal));
}

export function registerRunsCommand(program: Command): void {
  const runs = program.command('runs').description('Runs kept in $PIPELINE_HOME/runs: their status, steps, tasks, timings and outputs.');

  runs
    .command('list')
    .description('List runs, newest first.')
    .option('--json', 'print JSON')
    .action((flags: { json?: boolean }) => {
      const home = pipelineHome();
      const summaries = listRunIds(home).map((id) => load(home, id));
      if (flags.json) return printJson(summaries.map(({ steps: _steps, outputs: _outputs, files, ...rest }) => ({ ...rest, files: files.length })));
      if (summaries.length === 0) return printLine(`no runs in ${shown(home)}/runs`);
      printTable(
        ['RUN', 'STATUS', 'STARTED', 'TOOK', 'STEPS', 'FILES'],
        summaries.map((s) => [s.run_id, s.status, when(s.started_at), s.duration_ms === null ? '' : formatDuration(s.duration_ms), `${s.steps.filter((x) => x.status === 'succeeded').length}/${s.steps.length}`, s.files.length]),
      );
    });

  runs
    .command('show')
    .description("Show a run's steps with their tasks and timings, its failures and its outputs.")
    .argument('<run_id>')
    .option('--json', 'print JSON')
    .action((id: string, flags: { json?: boolean }) => {
      const home = pipelineHome();
      if (!runExists(home, id)) throw new UsageError(`no run ${id} in ${shown(home)}/runs (pipeline runs list shows them)`);
      const summary = load(home, id);
      if (flags.json) return printJson(summary);
      const paths = runPaths(home, id);
      printLine(`run      ${summary.run_id}`);
      printLine(`recipe   ${summary.recipe}`);
      printLine(`status   ${summary.status}${summary.duration_ms === null ? '' : ` in ${formatDuration(summary.duration_ms)}`}`);
      printLine(`started  ${when(summary.started_at)}`);
      printLine(`folder   ${shown(paths.dir)}`);
      printLine();
      printTable(
        ['STEP', 'STATUS', 'TOOK', 'TASKS'],
        summary.steps.map((s) => [`${summary.rows > 1 ? `row ${s.row + 1} ` : ''}${s.step}`, s.status, s.duration_ms === null ? '' : formatDuration(s.duration_ms), s.tasks.map((t) => `${t.task_id}${t.status ? ` (${t.status})` : ' (in flight)'}`).join(', ')]),
      );
      const failed = summary.steps.filter((s) => s.error);
      if (failed.length > 0) {
        printLine();
        for (const step of failed) printLine(`${step.step} failed (${step.error!.reason}${step.error!.outcome_unknown ? ', outcome unknown' : ''}): ${step.error!.message}`);
      }
      if (summary.files.length > 0) {
        printLine();
        printLine('outputs');
        for (const file of summary.files) printLine(`  ${shown(file.path)}  (${file.bytes} bytes)`);
      }
    });
}
