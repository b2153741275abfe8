// `run` and `resume` as the command line drives them: flags become the session's typed options
// once, here; the session builds and runs the run; this prints, draws and answers the exit code.
import { askYes } from '../ask-yes.js';
import { ConsoleReporter, type Reporter } from '../engine/reporter.js';
import { LiveView } from '../live/live-view.js';
import type { Plan } from '../plan.js';
import { formatDiagnostics } from '../recipe/diagnostics.js';
import { InvalidRecipe, UsageError } from '../session/errors.js';
import type { RunOptions, RunTraffic } from '../session/options.js';
import { resumeRun as resumeSession } from '../session/resume.js';
import * as session from '../session/run.js';
import { annotateDiagnostics } from './github-actions.js';
import { printJson, printLine, redact } from './output.js';
import { alreadySucceededJson, printRunEnd, reportRunToGitHub } from './run-end.js';
import type { RunFlags } from './run-flags.js';
import { sessionEnvironment } from './session-environment.js';
import { cliIo } from './io.js';
import { releaseYoungGeneration } from './young-generation.js';

export type { RpmFlag, RunFlags } from './run-flags.js';

/** The session's options of `run` and `resume` flags, read once; the interactive parts are added by `withTerminal`. */
export function runOptionsOf(flags: RunFlags): RunOptions {
  // Help shows them as alternatives; taken together, one of them would be silently ignored.
  // An unset variable in `--redis "$PIPELINE_REDIS_URL"` gives "": not the same as no --redis.
  if (flags.redis === '')
    throw new UsageError(
      '--redis was given an empty URL (an unset variable?): give redis://[:password@]host[:port], ' +
        'or leave --redis out to keep the budget in this process; nothing was sent',
    );
  if (flags.refresh && flags.cache === false)
    throw new UsageError(
      '--refresh and --no-cache cannot go together: --refresh runs every step and writes the step cache anew, ' +
        '--no-cache neither reads nor writes it; nothing was sent',
    );
  const cache: NonNullable<RunOptions['cache']> = {
    ...(flags.cache === false ? { enabled: false } : {}),
    ...(flags.refresh ? { refresh: true } : {}),
    ...(flags.cacheDir ? { dir: flags.cacheDir } : {}),
    ...(flags.cacheRemote !== undefined ? { remote: flags.cacheRemote } : {}),
    ...(flags.cacheRemoteReadOnly ? { remoteReadOnly: true } : {}),
  };
  const gateway = {
    ...(flags.local ? { local: true } : {}),
    ...(flags.apiKey !== undefined ? { apiKey: flags.apiKey } : {}),
    ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.toolUrl !== undefined ? { toolUrl: flags.toolUrl } : {}),
    ...(flags.llmUrl !== undefined ? { llmUrl: flags.llmUrl } : {}),
    ...(flags.schemaUrl !== undefined ? { schemaUrl: flags.schemaUrl } : {}),
  };
  return {
    gateway,
    set: flags.set,
    ...(flags.batch !== undefined ? { batch: flags.batch } : {}),
    ...(flags.skipInvalidRows ? { skipInvalidRows: true } : {}),
    ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
    ...(flags.queueAhead !== undefined ? { queueAhead: flags.queueAhead } : {}),
    ...(flags.rpm !== undefined ? { rpm: flags.rpm } : {}),
    ...(flags.redis !== undefined ? { redisUrl: flags.redis } : {}),
    ...(flags.workers !== undefined
      ? { workers: { url: flags.workers, ...(flags.workersQueue ? { queue: flags.workersQueue } : {}) } }
      : {}),
    ...(flags.webhookListen !== undefined
      ? { webhook: { listen: flags.webhookListen, ...(flags.webhookUrl ? { url: flags.webhookUrl } : {}) } }
      : {}),
    ...(flags.maxCost !== undefined ? { maxCostUsd: flags.maxCost } : {}),
    ...(flags.prices !== undefined ? { pricesFile: flags.prices } : {}),
    cache,
    ...(flags.report === false ? { report: false } : {}),
    ...(flags.out !== undefined ? { out: flags.out } : {}),
    ...(flags.resubmitUnknown ? { resubmitUnknown: true } : {}),
    ...(flags.force ? { force: true } : {}),
    ...(flags.yes ? { yes: true } : {}),
    ...(flags.confirmAbove !== undefined ? { confirmAboveUsd: flags.confirmAbove } : {}),
    // The job summary lists each row's steps from the run's result: only there is it kept whole.
    ...(cliIo().env.GITHUB_STEP_SUMMARY || cliIo().env.GITHUB_ACTIONS ? { keepRowOutcomes: true } : {}),
  };
}

/** On a terminal, a question answered y or yes (the end of the input is no); never asked off a terminal. */
const askOnTerminal = (question: string): Promise<boolean> => askYes(question, cliIo().stdin, cliIo().stderr);

/**
 * The command line's side of a run: the live view on a sized terminal (plain lines elsewhere),
 * Ctrl-C that stops submitting (twice: quit at once), and the question before a costly run.
 */
async function withTerminal<T>(options: RunOptions, work: (options: RunOptions) => Promise<T>): Promise<T> {
  const { stderr, stdin, env, clock, interrupts: signals } = cliIo();
  // A terminal of no rows (a pseudo-terminal nobody sized) could show no frame: it gets plain lines.
  const live = Boolean(stderr.isTTY) && !env.CI && stderr.rows !== 0;
  const controller = new AbortController();
  let report: Reporter | undefined;
  let stopListening = () => {};
  const reporter = (traffic: RunTraffic): Reporter => {
    // The run's analysis is over and its tasks start: the young generation may grow to its cap.
    releaseYoungGeneration();
    report = live
      ? new LiveView({ stream: stderr, clock, traffic, redact, noColor: Boolean(env.NO_COLOR) })
      : new ConsoleReporter(
          (text) => stderr.write(redact(text)),
          () => clock.now(),
        );
    // The live view counts 429s in its footer; plain output says so at the first, and counts them in its last line.
    if (!live) traffic.observe(firstRateLimitNote(report));
    let interrupts = 0;
    stopListening = signals.listen(() => {
      interrupts++;
      if (interrupts > 1) signals.quitNow(130);
      report?.note(
        'Stopping: no new submissions; tasks in flight stay in the journal. Press Ctrl-C again to quit at once.',
      );
      controller.abort(new Error('interrupted'));
    });
    return report;
  };
  const confirm = stdin.isTTY && stderr.isTTY ? { confirm: askOnTerminal } : {};
  try {
    return await work({ ...options, ...confirm, reporter, signal: controller.signal });
  } finally {
    stopListening();
  }
}

/** The session's run, printed as it ended; answers the exit code. */
function ended(run: session.SessionRun, flags: RunFlags): number {
  const code = printRunEnd(run, flags);
  reportRunToGitHub(run, flags);
  return code;
}

/** Starts a new run of a valid plan; answers the exit code. */
export async function startRun(
  plan: Plan,
  flags: RunFlags,
  source: { recipeText: string; batchPath: string | undefined; home: string },
): Promise<number> {
  const run = await withTerminal(runOptionsOf(flags), (options) =>
    session.startRun(plan, options, sessionEnvironment(source.home), source),
  );
  return ended(run, flags);
}

/** Resumes a run from its journal with the recipe and inputs it kept. */
export async function resumeRun(runId: string, flags: RunFlags, home: string): Promise<number> {
  let run: Awaited<ReturnType<typeof resumeSession>>;
  try {
    run = await withTerminal(runOptionsOf(flags), (options) => resumeSession(runId, options, sessionEnvironment(home)));
  } catch (error) {
    if (!(error instanceof InvalidRecipe)) throw error;
    cliIo().stderr.write(`${formatDiagnostics(error.diagnostics)}\n`);
    annotateDiagnostics(error.diagnostics);
    throw new UsageError(error.message);
  }
  if (run.status === 'already-succeeded') {
    if (flags.json) printJson(alreadySucceededJson(home, runId, run.fromBatchFile));
    else printLine(`run ${runId} already succeeded; nothing to resume`);
    return 0;
  }
  return ended(run, flags);
}

/** One line at the first 429 a run meets: plain output has no footer that would show it. */
function firstRateLimitNote(report: { note(text: string): void }) {
  let noted = false;
  return (observation: { status: number; retryAfterMs?: number }) => {
    if (observation.status !== 429 || noted) return;
    noted = true;
    const wait = observation.retryAfterMs === undefined ? '' : ` for ${Math.ceil(observation.retryAfterMs / 1000)}s`;
    report.note(`⏳ rate limited (429): waiting${wait} as the gateway asks; the run's last line counts the 429s`);
  };
}
