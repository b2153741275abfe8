import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { collect } from './collect.js';
import { addConnectionOptions, type ConnectionFlags } from './connection.js';
import { UsageError } from './errors.js';
import { numberFlag } from './flags.js';
import { pipelineHome } from './pipeline-home.js';

export interface RunFlags extends ConnectionFlags {
  set: string[];
  batch?: string;
  out?: string;
  concurrency?: number;
  rpmFlag?: string;
  webhookUrl?: string;
  webhookListen?: string;
  json?: boolean;
  resubmitUnknown?: boolean;
  /** `resume` only: go on despite unreadable journal lines or changed local files. */
  force?: boolean;
  /** false with `--no-cache`: the step cache is neither read nor written. */
  cache?: boolean;
  /** `--refresh`: the step cache is written, not read. */
  refresh?: boolean;
  cacheDir?: string;
}

/** Flags `run` and `resume` share: where to run, how fast, where results go. */
function addExecutionOptions(command: Command): Command {
  return addConnectionOptions(command)
    .option('--out <dir>', "copy the recipe's outputs into this folder under stable names")
    .option('--concurrency <n>', 'tasks in flight at once (default: the recipe\'s, else 4)', numberFlag('--concurrency', { integer: true, min: 1 }))
    .option('--rpm <n|auto>', 'requests per minute: a cap below the gateway\'s limit, or auto to follow its headers')
    .option('--webhook-url <url>', 'public URL that forwards to --webhook-listen: results arrive by webhook, with a slow safety poll')
    .option('--webhook-listen <host:port>', 'where this process listens for the webhook deliveries')
    .option('--json', 'print the run and its outputs as JSON on stdout')
    .option('--no-cache', 'neither read nor write the step cache: every step runs')
    .option('--refresh', 'run every step again and store the results in the step cache')
    .option('--cache-dir <dir>', 'the step cache folder (default: $PIPELINE_CACHE_DIR, else $PIPELINE_HOME/cache)');
}

function checkExecution(flags: RunFlags & { rpm?: string }): RunFlags {
  const rpm = flags.rpm;
  if (rpm !== undefined && rpm !== 'auto' && !(/^\d+$/.test(rpm) && Number(rpm) >= 1)) throw new UsageError(`--rpm takes a whole number of at least 1 or auto, got ${JSON.stringify(rpm)}`);
  if (Boolean(flags.webhookUrl) !== Boolean(flags.webhookListen)) throw new UsageError('--webhook-url and --webhook-listen go together');
  if (flags.webhookUrl && !/^https?:\/\//.test(flags.webhookUrl)) throw new UsageError(`--webhook-url must be an http(s) URL, got ${JSON.stringify(flags.webhookUrl)}`);
  const { rpm: _rpm, ...rest } = flags;
  return { ...rest, ...(rpm !== undefined && rpm !== 'auto' ? { rpm: Number(rpm) } : {}), ...(rpm !== undefined ? { rpmFlag: rpm } : {}) };
}

export function registerRunCommands(program: Command): void {
  addExecutionOptions(program.command('run').description("Run a recipe: every step, under the gateway's rate limit, journaled so it can be resumed.").argument('<recipe>', 'the recipe file'))
    .option('--set <name=value>', 'give an input (repeatable)', collect, [])
    .option('--batch <file>', 'input rows, one run each (.csv with a header row, or .jsonl), all under one budget')
    .action(async (recipe: string, raw: RunFlags & { rpm?: string }) => {
      const flags = checkExecution(raw);
      const [{ loadRecipe }, { formatDiagnostics }] = await Promise.all([import('./load-recipe.js'), import('../recipe/diagnostics.js')]);
      const result = loadRecipe(recipe, { set: flags.set, ...(flags.batch ? { batch: flags.batch } : {}) });
      if (!result.ok) {
        process.stderr.write(`${formatDiagnostics(result.error)}\n`);
        (await import('./github-actions.js')).annotateDiagnostics(result.error);
        throw new UsageError(`${result.error.length} error${result.error.length === 1 ? '' : 's'} in ${recipe}; nothing was run`);
      }
      const { startRun } = await import('./run-session.js');
      process.exitCode = await startRun(result.value, flags, { recipeText: readFileSync(recipe, 'utf8'), batchPath: flags.batch, home: pipelineHome() });
    });

  addExecutionOptions(program.command('resume').description('Resume a run from its journal: finished steps are kept, submitted tasks are polled, not sent again.').argument('<run_id>'))
    .option('--resubmit-unknown', 'send again the submissions that were in flight when the run stopped (they may already exist)')
    .option('--force', 'resume even though journal lines are unreadable or local files changed (may pay for work again)')
    .action(async (runId: string, raw: RunFlags & { rpm?: string }) => {
      const flags = checkExecution({ ...raw, set: [] });
      const { resumeRun } = await import('./run-session.js');
      process.exitCode = await resumeRun(runId, flags, pipelineHome());
    });
}

/** The recipe and its batch file, kept in the run folder so that `resume` runs exactly them. */
export function keepRecipe(paths: { recipe: string; batch: string }, recipeText: string, batchPath: string | undefined): string | null {
  writeFileSync(paths.recipe, recipeText);
  if (!batchPath) return null;
  const kept = `${paths.batch}${extname(batchPath)}`;
  copyFileSync(batchPath, kept);
  return kept;
}

export const shown = (path: string) => {
  const rel = relative(process.cwd(), resolve(path));
  return rel.startsWith('..') ? resolve(path) : rel;
};

