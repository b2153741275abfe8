import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { RpmFlag, RunFlags } from './run-session.js';
import { parseRemoteUrl } from '../cache/remote-url.js';
import { yesNo } from '../yes-no.js';
import { parseListenAddress } from '../engine/listen-address.js';
import { checkRedisUrl } from '../scheduler/redis-url.js';
import { addConnectionOptions } from './connection.js';
import { InvalidRecipe, UsageError } from './errors.js';
import { collectSet, numberFlag } from './flags.js';
import { pipelineHome } from './pipeline-home.js';
import { resolveRunId, RUN_ID_HELP } from './run-id.js';
import { checkSkipInvalidRows, rowOptions, SKIP_INVALID_ROWS_HELP, skippedRowsWarning } from './skipped-rows.js';
import { cliIo, fromCwd, setExitCode } from './io.js';

/** Flags `run` and `resume` share: where to run, how fast, where results go. */
function addExecutionOptions(command: Command): Command {
  return addConnectionOptions(command)
    .option('--out <dir>', "copy the recipe's outputs into this folder under stable names")
    .option(
      '--concurrency <n>',
      "tasks in flight at once (default: the recipe's, else 4)",
      numberFlag('--concurrency', { integer: true, min: 1 }),
    )
    .option(
      '--queue-ahead <n>',
      "tasks submitted beyond --concurrency, to wait in the gateway's own queue (default: the recipe's, else 0)",
      numberFlag('--queue-ahead', { integer: true, min: 0 }),
    )
    .option(
      '--rpm <n|auto>',
      "requests per minute: a cap below the gateway's limit, or auto to follow its headers",
      parseRpm,
    )
    .option(
      '--redis <url>',
      'share the rate budget and learned durations with every process on the same key (env PIPELINE_REDIS_URL)',
    )
    .option(
      '--workers <url>',
      'coordinate: queue the items on this Redis (BullMQ) for `pipeline worker` processes to run (docs/workers.md)',
    )
    .option('--workers-queue <name>', "the workers' queue (default: $PIPELINE_WORKERS_QUEUE, else pipeline)")
    .option(
      '--webhook-listen <host:port>',
      'results arrive by webhook at this address (port 0: a free one), with a slow safety poll',
    )
    .option(
      '--webhook-url <url>',
      'the public URL that forwards to --webhook-listen, when the gateway cannot reach that address',
    )
    .option('--json', 'print the run and its outputs as JSON on stdout')
    .option(
      '--max-cost <usd>',
      'the most the run may commit, in USD (default: settings.max_cost); items past it fail with spend-cap',
      numberFlag('--max-cost', { min: 0 }),
    )
    .option('--prices <file>', 'a YAML or JSON map of model slug to price, over the bundled prices and settings.prices')
    .option('--no-cache', 'neither read nor write the step cache: every step runs')
    .option('--refresh', 'run every step again and store the results in the step cache')
    .option('--cache-dir <dir>', 'the step cache folder (default: $PIPELINE_CACHE_DIR, else $PIPELINE_HOME/cache)')
    .option(
      '--cache-remote <url>',
      'a step cache shared by machines, s3://bucket/prefix (env PIPELINE_CACHE_REMOTE; endpoint, region and keys from the AWS variables)',
    )
    .option('--no-cache-remote', "use no remote step cache, not even the recipe's settings.cache_remote")
    .option(
      '--cache-remote-read-only',
      'read the remote step cache, never write to it: for untrusted jobs such as pull requests (env PIPELINE_CACHE_REMOTE_READ_ONLY=true)',
    )
    .option('--no-report', 'do not write report.html when the run ends (pipeline report RUN_ID writes it later)');
}

function parseRpm(value: string): RpmFlag {
  if (value === 'auto') return 'auto';
  if (!(/^\d+$/.test(value) && Number(value) >= 1))
    throw new UsageError(`--rpm takes a whole number of at least 1 or auto, got ${JSON.stringify(value)}`);
  return Number(value);
}

function checkExecution(flags: RunFlags): RunFlags {
  // The recipe's settings.cache_remote is checked with the recipe; the flag and the variable here.
  const fromEnv = cliIo().env.PIPELINE_CACHE_REMOTE;
  const remote =
    typeof flags.cacheRemote === 'string'
      ? { source: '--cache-remote', url: flags.cacheRemote }
      : flags.cacheRemote === undefined && fromEnv
        ? { source: 'PIPELINE_CACHE_REMOTE', url: fromEnv }
        : undefined;
  const address = remote && parseRemoteUrl(remote.url);
  if (address && !address.ok) throw new UsageError(`${remote!.source}: ${address.error}`);
  const readOnly = yesNo('PIPELINE_CACHE_REMOTE_READ_ONLY', cliIo().env.PIPELINE_CACHE_REMOTE_READ_ONLY);
  if (!readOnly.ok) throw new UsageError(readOnly.error);
  checkWorkers(flags);
  if (flags.webhookListen !== undefined) {
    const listen = parseListenAddress(flags.webhookListen);
    if (!listen.ok) throw new UsageError(`--webhook-listen ${listen.error}`);
  }
  if (flags.webhookUrl && !flags.webhookListen)
    throw new UsageError('--webhook-url needs --webhook-listen: where this process listens for what that URL forwards');
  if (flags.webhookUrl && !/^https?:\/\//.test(flags.webhookUrl))
    throw new UsageError(`--webhook-url must be an http(s) URL, got ${JSON.stringify(flags.webhookUrl)}`);
  return flags;
}

/** `--workers`: a Redis URL, and a gateway the workers reach too (not one inside this process). */
function checkWorkers(flags: RunFlags): void {
  if (flags.workers === undefined) {
    // As --webhook-url without --webhook-listen: a flag that would do nothing is a mistake to say.
    if (flags.workersQueue !== undefined)
      throw new UsageError('--workers-queue names the queue of --workers REDIS_URL, which is not given');
    return;
  }
  const url = checkRedisUrl(flags.workers, '--workers');
  if (!url.ok) throw new UsageError(url.error);
  if (flags.local)
    throw new UsageError(
      '--workers needs a gateway the workers reach too; --local starts one inside this process. Start one with `pipeline gateway serve` and set PIPELINE_BASE_URL',
    );
  if (flags.webhookListen)
    throw new UsageError('--workers and --webhook-listen do not go together: the workers poll the tasks they submit');
}

export function registerRunCommands(program: Command): void {
  addExecutionOptions(
    program
      .command('run')
      .description("Run a recipe: every step, under the gateway's rate limit, journaled so it can be resumed.")
      .argument('<recipe>', 'the recipe file'),
  )
    .option('--set <name=value>', 'give an input (repeatable)', collectSet, [])
    .option(
      '--batch <file>',
      'input rows, one run each (.csv with a header row, or .jsonl / .ndjson), all under one budget',
    )
    .option('--yes', "start even when the estimate is over the team's balance or --confirm-above, without asking")
    .option(
      '--confirm-above <usd>',
      'on a terminal, ask before a run estimated over this many USD (default 5)',
      numberFlag('--confirm-above', { min: 0 }),
    )
    .option('--skip-invalid-rows', `${SKIP_INVALID_ROWS_HELP}; the rest run`)
    .action(async (recipe: string, raw: RunFlags) => {
      const flags = checkExecution(raw);
      const [{ loadRecipe }, { errorsIn, formatDiagnostics }] = await Promise.all([
        import('./load-recipe.js'),
        import('../recipe/diagnostics.js'),
      ]);
      checkSkipInvalidRows(flags);
      const result = await loadRecipe(recipe, rowOptions(flags));
      if (!result.ok) {
        const diagnostics = formatDiagnostics(result.error);
        cliIo().stderr.write(`${diagnostics}\n`);
        (await import('./github-actions.js')).annotateDiagnostics(result.error);
        const message = `${errorsIn(result.error)}; nothing was run`;
        throw new InvalidRecipe(message, result.error, diagnostics);
      }
      const skipped = skippedRowsWarning(result.value);
      if (skipped) cliIo().stderr.write(`${skipped}\n`);
      const { startRun } = await import('./run-session.js');
      setExitCode(
        await startRun(result.value, flags, {
          recipeText: readFileSync(fromCwd(recipe), 'utf8'),
          batchPath: flags.batch,
          home: pipelineHome(),
        }),
      );
    });

  addExecutionOptions(
    program
      .command('resume')
      .description(
        'Resume a run from its journal: finished steps are kept, submitted tasks are polled, not sent again.',
      )
      .argument('<run_id>', RUN_ID_HELP),
  )
    .option(
      '--resubmit-unknown',
      'send again the submissions that were in flight when the run stopped (they may already exist)',
    )
    .option(
      '--force',
      'resume even though journal lines are unreadable, local files changed (may pay for work again), or the gateway is at another address',
    )
    .action(async (runId: string, raw: RunFlags) => {
      const flags = checkExecution({ ...raw, set: [] });
      const { resumeRun } = await import('./run-session.js');
      const home = pipelineHome();
      setExitCode(await resumeRun(resolveRunId(home, runId), flags, home));
    });
}
