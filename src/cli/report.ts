import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { reportPathOf } from '../session/run-end.js';
import { runPaths } from '../store/run-store.js';
import { UsageError } from './errors.js';
import { printError, printLine, shown } from './output.js';
import { pipelineHome } from './pipeline-home.js';
import { RUN_ID_HELP, resolveRunId } from './run-id.js';
import { cliIo, fromCwd } from './io.js';

/** The page in the system's browser; a missing opener is a warning, the report is written anyway. */
function openInBrowser(path: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [path]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', path]]
        : ['xdg-open', [path]];
  const child = spawn(command as string, args as string[], { stdio: 'ignore', detached: true, env: cliIo().env });
  child.on('error', (error) =>
    printError(`warning: --open: could not start ${command}: ${error.message}; open ${shown(path)} yourself`),
  );
  child.unref();
}

function checkOut(out: string): string {
  const path = fromCwd(out);
  if (existsSync(path) && statSync(path).isDirectory())
    throw new UsageError(`--out must name a file, and ${shown(path)} is a folder`);
  if (!existsSync(dirname(path))) throw new UsageError(`--out: the folder ${shown(dirname(path))} does not exist`);
  return path;
}

export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description("Write a run's HTML report again from its journal (runs/<id>/report.html): gallery, timeline, steps.")
    .argument('<run_id>', RUN_ID_HELP)
    .option('--out <file>', 'write the report to this file instead (outputs are linked relative to it)')
    .option('--open', "open the report in the system's browser")
    .action(async (name: string, flags: { out?: string; open?: boolean }) => {
      const home = pipelineHome();
      const id = resolveRunId(home, name);
      const paths = runPaths(home, id);
      const out = flags.out ? checkOut(flags.out) : reportPathOf(paths);
      const { writeReport } = await import('../report/write-report.js');
      const written = await writeReport(paths.journal, out);
      if (!written.ok) throw new UsageError(`run ${id} has no report: ${written.error.message}`);
      printLine(shown(written.value.path));
      if (flags.open) openInBrowser(written.value.path);
    });
}
