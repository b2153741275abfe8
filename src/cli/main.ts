#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import tab from '@bomb.sh/tab/commander';
import { Command, CommanderError } from 'commander';
import { registerAccountCommand } from './account.js';
import { registerCacheCommand } from './cache-command.js';
import { GatewayRefusal, UsageError } from './errors.js';
import { registerFilesCommand } from './files.js';
import { registerInitCommand } from './init.js';
import { addHelpTexts } from './help-text.js';
import { registerGatewayCommand } from './gateway-serve.js';
import { registerModelsCommand } from './models.js';
import { registerPlanCommand } from './plan.js';
import { registerReportCommand } from './report.js';
import { registerRunCommands } from './run.js';
import { registerRunsCommand } from './runs.js';
import { registerValidateCommand } from './validate.js';
import { programName } from './invocation.js';
import { printError } from './output.js';
import { registerTaskCommand } from './task.js';

// For benchmarks: the process's own CPU time and peak memory, written as JSON when it exits.
const usageFile = process.env.PIPELINE_USAGE_FILE;
if (usageFile) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      usageFile,
      JSON.stringify({
        user_ms: usage.userCPUTime / 1000,
        system_ms: usage.systemCPUTime / 1000,
        max_rss_kb: usage.maxRSS,
      }),
    );
  });
}

// A reader that closed the pipe (`pipeline runs list | head -1`) has all it wanted: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

const program = new Command()
  .name(programName())
  .description(
    'Run YAML recipes of web, LLM, image and video generation steps against an asynchronous, rate-limited generation gateway.',
  )
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerRunCommands(program);
registerRunsCommand(program);
registerReportCommand(program);
registerValidateCommand(program);
registerPlanCommand(program);
registerGatewayCommand(program);
registerAccountCommand(program);
registerModelsCommand(program);
registerFilesCommand(program);
registerTaskCommand(program);
registerCacheCommand(program);
registerInitCommand(program);
// `completion bash|zsh|fish|powershell` prints a script that asks the hidden `complete -- …` for
// the commands and options above; registered after them, so it sees every one of them.
tab(program, { completionCommandName: 'completion' });
addHelpTexts(program);

// The command whose action is running: a `run` or `resume` that ends in exit 2 says so in the job summary.
let running: Command | undefined;
program.hook('preAction', (_program, actionCommand) => {
  running = actionCommand;
});

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with exit code 0.
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  if (error instanceof UsageError) {
    printError(`pipeline: ${error.message}`);
    const name = running?.name();
    if ((name === 'run' || name === 'resume') && process.env.GITHUB_STEP_SUMMARY) {
      // Nothing ran: without this, the job page would have no summary of the step at all.
      const { appendNotRunSummary } = await import('./github-actions.js');
      const target = `${name === 'resume' ? 'resume ' : ''}${running!.args[0] ?? ''}`;
      appendNotRunSummary(target, error.message, error.details);
    }
    process.exit(2);
  }
  if (error instanceof GatewayRefusal) {
    printError(`pipeline: ${error.message}`);
    process.exit(1);
  }
  printError(`pipeline: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
