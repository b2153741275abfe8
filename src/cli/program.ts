import tab from '@bomb.sh/tab/commander';
import { Command, CommanderError } from 'commander';
import { registerAccountCommand } from './account.js';
import { registerCacheCommand } from './cache-command.js';
import { GatewayRefusal, InvalidRecipe, UsageError } from './errors.js';
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
import { cliIo, withInvocation, type CliIo } from './io.js';
import { printError, printJson } from './output.js';
import { registerTaskCommand } from './task.js';
import { registerWorkerCommand } from './worker.js';

export type { CliIo, CliOutput, Interrupts } from './io.js';
export { processIo } from './io.js';

/** The command line's one entry point: `pipeline` runs it on its process, tests on io of their own. */
function buildProgram(io: CliIo): { program: Command; running: () => Command | undefined } {
  const program = new Command()
    .name(programName(io.argv1))
    .description(
      'Run YAML recipes of web, LLM, image and video generation steps against an asynchronous, rate-limited generation gateway.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // As commander's own: a terminal's width, else its default (undefined, which the types leave out).
      getOutHelpWidth: () => (io.stdout.isTTY ? io.stdout.columns : undefined) as number,
      getErrHelpWidth: () => (io.stderr.isTTY ? io.stderr.columns : undefined) as number,
    });

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
  registerWorkerCommand(program);
  // `completion bash|zsh|fish|powershell` prints a script that asks the hidden `complete -- …` for
  // the commands and options above; registered after them, so it sees every one of them.
  tab(program, { completionCommandName: 'completion' });
  addHelpTexts(program);

  // The command whose action is running: a `run` or `resume` that ends in exit 2 says so in the job summary.
  let running: Command | undefined;
  program.hook('preAction', (_program, actionCommand) => {
    running = actionCommand;
  });
  return { program, running: () => running };
}

/**
 * Runs one command line (the arguments after the program's name) on `io`, and answers its exit
 * code: 0 done, 1 failed, 2 a usage error that cost nothing, 3 stopped by money, 130 interrupted.
 * It never exits the process.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  return (await runCommandLine(argv, io)).exitCode;
}

/**
 * As runCli, and says how the command ended: it returned (its exit code set or 0), or it threw (an
 * error it printed). The bin exits at once after a throw, as it always has, whatever is left open.
 * `sole`: the process runs this command line and no other (the bin), see withInvocation.
 */
export async function runCommandLine(
  argv: readonly string[],
  io: CliIo,
  sole = false,
): Promise<{ exitCode: number; ended: 'returned' | 'threw' }> {
  const { value: thrown, exitCode } = await withInvocation(
    io,
    async () => {
      const { program, running } = buildProgram(io);
      try {
        await program.parseAsync([...argv], { from: 'user' });
        return undefined;
      } catch (error) {
        return exitCodeOf(error, running());
      }
    },
    sole,
  );
  return thrown === undefined ? { exitCode, ended: 'returned' } : { exitCode: thrown, ended: 'threw' };
}

/** Says what went wrong, and answers the exit code it calls for. */
async function exitCodeOf(error: unknown, running: Command | undefined): Promise<number> {
  // --help and --version end here too, with exit code 0.
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  if (error instanceof UsageError) {
    printError(`pipeline: ${error.message}`);
    await printNotStartedJson(running, error instanceof InvalidRecipe ? 'invalid' : 'refused', error);
    await notRunOnTheJobPage(running, error, 2);
    return 2;
  }
  if (error instanceof GatewayRefusal) {
    printError(`pipeline: ${error.message}`);
    await printNotStartedJson(running, 'error', error);
    // A rejected key (a rotated secret) or an unreachable gateway: the job page says so too.
    await notRunOnTheJobPage(running, error, 1);
    return 1;
  }
  printError(`pipeline: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
}

/**
 * In a GitHub Actions job, a run or resume that never started: the step's summary says why, and an
 * annotation does (an invalid recipe's diagnostics are annotated at their places instead). Without
 * it, the job page has no summary of the step at all.
 */
async function notRunOnTheJobPage(
  running: Command | undefined,
  error: UsageError | GatewayRefusal,
  exitCode: number,
): Promise<void> {
  const name = running?.name();
  if ((name !== 'run' && name !== 'resume') || !cliIo().env.GITHUB_STEP_SUMMARY) return;
  const { appendNotRunSummary, printAnnotations } = await import('./github-actions.js');
  const target = `${name === 'resume' ? 'resume ' : ''}${running!.args[0] ?? ''}`;
  appendNotRunSummary(
    target,
    error.message,
    error instanceof UsageError ? error.details : undefined,
    cliIo().env,
    exitCode,
  );
  if (!(error instanceof InvalidRecipe))
    printAnnotations([{ kind: 'error', title: 'pipeline: not run', message: error.message }]);
}

/**
 * `run --json` and `resume --json` that end before a run starts still print JSON on stdout, so that
 * a script reading it learns why: `invalid` (the recipe's diagnostics), `refused` (a usage error or
 * the cost over --max-cost: exit 2, nothing sent) or `error` (the gateway refused the key or could
 * not be reached: exit 1). Both errors are thrown only before a run starts, when nothing is printed yet.
 */
async function printNotStartedJson(
  running: Command | undefined,
  status: 'invalid' | 'refused' | 'error',
  error: UsageError | GatewayRefusal,
): Promise<void> {
  const name = running?.name();
  if ((name !== 'run' && name !== 'resume') || running?.opts().json !== true) return;
  const { diagnosticJson } = await import('../recipe/diagnostics.js');
  const diagnostics = error instanceof InvalidRecipe ? error.diagnostics.map(diagnosticJson) : [];
  printJson({ run_id: null, status, message: error.message, diagnostics });
}
