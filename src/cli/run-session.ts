import { hostname } from 'node:os';
import { withoutCredentials } from '../credentials.js';
import { setMaxListeners } from 'node:events';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import PQueue from 'p-queue';
import pino from 'pino';
import type { EngineContext, WebhookInbox } from '../engine/context.js';
import type { RemoteItems } from '../engine/remote.js';
import { DurationModel } from '../engine/durations.js';
import { runPlan } from '../engine/engine.js';
import { ConsoleReporter, reporterConsumer } from '../engine/reporter.js';
import { eventStream } from '../engine/events.js';
import { journalConsumer } from '../engine/journal-consumer.js';
import { logConsumer } from '../engine/log-consumer.js';
import { LiveView, type TrafficGauge } from '../live/live-view.js';
import { Uploads } from '../engine/uploads.js';
import { openWebhookInbox } from '../engine/webhook-inbox.js';
import type { Plan } from '../plan.js';
import { analyze } from '../recipe/analyzer.js';
import { formatDiagnostics } from '../recipe/diagnostics.js';
import { describeLines, FileJournal, readJournalFile, type Journal } from '../store/journal.js';
import { replayJournal, type ReplayedState } from '../store/replay.js';
import { createRun, newRunId, runExists, runPaths, type RunPaths } from '../store/run-store.js';
import { spendFigures } from '../store/summary.js';
import { openRunCache } from './cache-setup.js';
import { connect, type BudgetOptions, type Connection } from './connection.js';
import { annotateDiagnostics } from './github-actions.js';
import { FailedStepAnnotations } from '../report/failed-step-annotations.js';
import { StepTraffic } from './step-traffic.js';
import { UsageError } from './errors.js';
import { analyzerDeps, offlineSchemas } from './load-recipe.js';
import { changedFiles, hashFiles, localFilesOf } from './run-files.js';
import { printLine, redact, shown } from './output.js';
import { checkBalance, moneyBeforeStart, type RunMoney } from './run-money.js';
import { SpendMeter } from '../engine/spend.js';
import { cliIo, fromCwd } from './io.js';
import { finish, reportToGitHub } from './run-end.js';
import type { RunFlags } from './run-flags.js';

export type { RpmFlag, RunFlags } from './run-flags.js';

/** The recipe and its batch file, kept in the run folder so that `resume` runs exactly them. */
export function keepRecipe(
  paths: { recipe: string; batch: string },
  recipeText: string,
  batchPath: string | undefined,
): string | null {
  writeFileSync(paths.recipe, recipeText);
  if (!batchPath) return null;
  const kept = `${paths.batch}${extname(batchPath)}`;
  copyFileSync(fromCwd(batchPath), kept);
  return kept;
}

/**
 * The requests-per-minute cap of a run: `--rpm N`, else the recipe's `settings.rpm` when it is a
 * number, unless `--rpm auto` says to follow the gateway's headers only.
 */
function budgetOptions(plan: Plan, flags: RunFlags, home?: string): BudgetOptions {
  // A coordinator shares its budget with its workers: on their Redis unless told another.
  const redisUrl = flags.redis ?? cliIo().env.PIPELINE_REDIS_URL ?? flags.workers;
  const shared = { ...(home ? { home } : {}), ...(redisUrl ? { redisUrl } : {}) };
  if (flags.rpm === 'auto') return shared;
  const cap = flags.rpm ?? (typeof plan.settings.rpm === 'number' ? plan.settings.rpm : undefined);
  return cap === undefined ? shared : { ...shared, maxPerMinute: cap };
}

/** This process, as the journal names the one writing it. */
const thisProcess = () => ({ pid: process.pid, host: hostname() });

/** Starts a new run of a valid plan; answers the exit code. */
export async function startRun(
  plan: Plan,
  flags: RunFlags,
  source: { recipeText: string; batchPath: string | undefined; home: string },
): Promise<number> {
  const money = await moneyBeforeStart(plan, flags, false);
  const connection = await connect(flags, budgetOptions(plan, flags, source.home));
  // The key check and the balance are requests too: a run the step cache serves whole makes none.
  if (!money.sendsNothing)
    await checkedOrClosed(connection, (balance) => checkBalance(connection, money, flags, balance));
  const runId = newRunId(plan.name, connection.clock.now());
  const paths = createRun(source.home, runId);
  const batch = keepRecipe(paths, source.recipeText, source.batchPath);
  const journal = new FileJournal(paths.journal, () => connection.clock.now());
  await journal.appendDurable({
    type: 'run-started',
    owner: thisProcess(),
    run_id: runId,
    recipe: plan.recipePath,
    name: plan.name,
    rows: plan.rows,
    sets: flags.set,
    batch,
    cwd: cliIo().cwd,
    batch_source: source.batchPath ? fromCwd(source.batchPath) : null,
    local_files: hashFiles(localFilesOf(plan)),
    cost: { estimated_usd: money.estimate.usd, lower_bound: money.estimate.lower_bound },
    ...(plan.skippedRows?.length ? { skipped_rows: plan.skippedRows } : {}),
    dag: plan.steps.map((s) => ({
      id: s.id,
      action: s.action,
      depends_on: s.dependsOn,
      ...('model' in s ? { model: s.model.slug } : {}),
    })),
  });
  return execute(plan, flags, connection, paths, journal, undefined, money);
}

/** An unreachable gateway or a refused key ends the command before a run exists or a step starts. */
/** The gateway check before a run, then `more` with the balance it read; the connection is closed if either fails. */
async function checkedOrClosed(
  connection: Connection,
  more: (balance: number | undefined) => Promise<unknown> = async () => undefined,
): Promise<void> {
  try {
    await more(await connection.check());
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** Resumes a run from its journal with the recipe and inputs it kept. */
export async function resumeRun(runId: string, flags: RunFlags, home: string): Promise<number> {
  if (!runExists(home, runId))
    throw new UsageError(`no run ${runId} in ${shown(home)}/runs (pipeline runs list shows them)`);
  const paths = runPaths(home, runId);
  const replayed = replayJournal(readJournalFile(paths.journal));
  if (!replayed.ok) throw new UsageError(`run ${runId} cannot be resumed: ${replayed.error.message}`);
  const state = replayed.value;
  if (state.status === 'succeeded') {
    printLine(`run ${runId} already succeeded; nothing to resume`);
    return 0;
  }
  checkJournalDamage(runId, state, flags);
  const plan = { ...analyzeKeptRecipe(paths, state), rows: state.rows };
  checkLocalFiles(state, flags);
  const money = await moneyBeforeStart(plan, flags, true);
  const connection = await connect(flags, budgetOptions(plan, flags, home));
  await checkedOrClosed(connection);
  const journal = new FileJournal(paths.journal, () => connection.clock.now());
  const accepted = flags.force && state.unacceptedDamage.length > 0 ? { accepted_damage: state.unacceptedDamage } : {};
  await journal.appendDurable({ type: 'run-resumed', owner: thisProcess(), ...accepted });
  return execute(plan, flags, connection, paths, journal, state, money);
}

/**
 * An unreadable journal line may have recorded a submission: without it, the item looks never
 * sent and a resume would pay for it again. So a resume goes on over damage only when told to.
 */
function checkJournalDamage(runId: string, state: ReplayedState, flags: RunFlags): void {
  if (state.unacceptedDamage.length === 0) return;
  const lines = describeLines(state.unacceptedDamage);
  if (!flags.force) {
    throw new UsageError(
      `the journal of run ${runId} has ${lines} that could not be read; they may have recorded submitted (paid) tasks, ` +
        "which a resume would submit again. Check the team's tasks, then resume with --force to go on from what could be read",
    );
  }
  cliIo().stderr.write(
    `warning: --force: ${lines} of the journal could not be read; items not known to be submitted will be submitted\n`,
  );
}

/**
 * The recipe copy kept in the run folder, analyzed as if it stood at the original recipe's path
 * and the run were started from the same folder: its relative paths still find the user's files.
 */
function analyzeKeptRecipe(paths: RunPaths, state: ReplayedState): Plan {
  const batchText = state.batch ? readFileSync(state.batch, 'utf8') : undefined;
  const batch =
    state.batch && batchText !== undefined ? { path: state.batchSource ?? state.batch, text: batchText } : undefined;
  const loaded = analyze(
    {
      path: state.recipePath,
      text: readFileSync(paths.recipe, 'utf8'),
      cwd: state.cwd ?? cliIo().cwd,
      ...(state.sets.length ? { sets: state.sets } : {}),
      ...(batch ? { batch } : {}),
    },
    analyzerDeps(),
  );
  if (!loaded.ok) {
    cliIo().stderr.write(`${formatDiagnostics(loaded.error)}\n`);
    annotateDiagnostics(loaded.error);
    throw new UsageError(`the recipe kept in ${shown(paths.recipe)} no longer analyzes; the run cannot be resumed`);
  }
  return loaded.value;
}

/** Items made from a file's old bytes and items made from its new bytes would not belong together. */
function checkLocalFiles(state: ReplayedState, flags: RunFlags): void {
  const changed = changedFiles(state.localFiles);
  if (changed.length === 0) return;
  const list = changed.map(shown).join(', ');
  if (!flags.force)
    throw new UsageError(
      `local files changed since the run started: ${list}. Resume with --force to use them as they are now`,
    );
  cliIo().stderr.write(`warning: --force: local files changed since the run started: ${list}\n`);
}

/**
 * The live view's footer: requests and 429s counted by the meter; the limit is the run's cap, else
 * the one the gateway's headers announce (a limit per minute, as the gateway names it: `rpm`).
 */
function gaugeOf(connection: Connection, cap: number | undefined): TrafficGauge {
  return {
    perMinute: () => connection.traffic.perMinute(),
    get rateLimited() {
      return connection.traffic.rateLimited;
    },
    limit: () => cap ?? connection.budget.snapshot().limit,
  };
}

async function execute(
  plan: Plan,
  flags: RunFlags,
  connection: Connection,
  paths: RunPaths,
  journal: Journal,
  resume: ReplayedState | undefined,
  money: RunMoney,
): Promise<number> {
  const { clock, client } = connection;
  connection.traffic.attach(journal);
  const log = pino(
    {
      base: { run: paths.id },
      redact: { paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization'], censor: '***' },
    },
    pino.destination({ dest: paths.log, sync: true, mkdir: true }),
  );
  // A terminal of no rows (a pseudo-terminal nobody sized) could show no frame: it gets plain lines.
  const { stderr } = cliIo();
  const live = Boolean(stderr.isTTY) && !cliIo().env.CI && stderr.rows !== 0;
  const report = live
    ? new LiveView({
        stream: stderr,
        clock,
        traffic: gaugeOf(connection, budgetOptions(plan, flags).maxPerMinute),
        redact,
      })
    : new ConsoleReporter(
        (text) => stderr.write(redact(text)),
        () => clock.now(),
      );
  const controller = new AbortController();
  // Every wait of every task listens to this signal: thousands of listeners are expected.
  setMaxListeners(0, controller.signal);
  let interrupts = 0;
  const { interrupts: signals } = cliIo();
  const onInterrupt = () => {
    interrupts++;
    if (interrupts > 1) signals.quitNow(130);
    report.note(
      'Stopping: no new submissions; tasks in flight stay in the journal. Press Ctrl-C again to quit at once.',
    );
    controller.abort(new Error('interrupted'));
  };
  const stopListening = signals.listen(onInterrupt);
  let inbox: (WebhookInbox & { close(): Promise<void> }) | undefined;
  let remote: (RemoteItems & { close(): Promise<void> }) | undefined;
  const env = withoutCredentials(cliIo().env);
  try {
    if (flags.webhookListen) inbox = await openWebhookInbox(flags.webhookListen, flags.webhookUrl);
    if (flags.workers) remote = await openCoordinator(flags.workers, flags, plan, paths.id, connection, report);
    const concurrency = flags.concurrency ?? plan.settings.concurrency;
    const home = resolve(paths.dir, '..', '..');
    const cache = openRunCache(flags, home, clock, (text) => report.note(text), plan.settings.cacheRemote);
    const traffic = new StepTraffic();
    connection.observers.push(traffic.observe);
    // The live view counts 429s in its footer; plain output says so at the first, and counts them in its last line.
    if (!live) connection.observers.push(firstRateLimitNote(report));
    const failedSteps = new FailedStepAnnotations(plan.rows.length, cliIo().cwd, redact);
    const emit = eventStream(
      journalConsumer(journal),
      reporterConsumer(report, plan.rows.length),
      logConsumer(log),
      failedSteps.consume,
    );
    const ctx: EngineContext = {
      plan,
      client,
      clock,
      journal,
      runId: paths.id,
      runDir: paths.dir,
      outputsDir: paths.outputs,
      tasks: new PQueue({ concurrency }),
      durations: new DurationModel(await connection.durations.load(), (slug, learned) =>
        connection.durations.record(slug, learned),
      ),
      uploads: new Uploads(client, journal, clock, resume?.uploads ?? []),
      downloads: new Map(resume?.downloads ?? []),
      modelSchema: offlineSchemas(),
      log,
      report,
      emit,
      signal: controller.signal,
      resubmitUnknown: Boolean(flags.resubmitUnknown),
      env,
      spend: new SpendMeter(money.pricing, {
        committedUsd: resume?.committedUsd ?? 0,
        ...(money.capUsd !== undefined ? { capUsd: money.capUsd } : {}),
      }),
      ...(resume ? { resume } : {}),
      ...(inbox ? { webhook: inbox } : {}),
      ...(cache ? { cache } : {}),
      ...(remote ? { remote } : {}),
      withinStep: traffic.within,
    };
    report.note(
      `${resume ? 'resuming' : 'run'} ${paths.id}: ${plan.steps.length} steps${plan.rows.length > 1 ? ` × ${plan.rows.length} rows` : ''}, ${remote ? 'tasks on the workers' : `${concurrency} tasks at once`}, logs in ${shown(paths.log)}`,
    );
    const result = await runPlan(ctx);
    report.close();
    connection.traffic.flush();
    const rateLimited = connection.traffic.rateLimited;
    const ended = await finish(result, plan, flags, paths, journal, log, cache?.counts, rateLimited);
    const counts = {
      cached: (key: string) => cache?.hitKeys.get(key)?.length ?? 0,
      traffic: (key: string) => traffic.byStep.get(key),
    };
    const out = flags.out ? { dir: fromCwd(flags.out), copied: ended.copied } : undefined;
    reportToGitHub(plan, result, failedSteps, {
      summary: ended.summary,
      counts,
      spend: spendFigures(ended.summary.cost),
      rateLimited,
      outputsDir: paths.outputs,
      ...(out ? { out } : {}),
    });
    return ended.code;
  } finally {
    stopListening();
    journal.close();
    await inbox?.close();
    await remote?.close();
    await connection.durations.flush().catch(() => {});
    await connection.close();
  }
}

/** `--workers`: the coordinator of this run, on the workers' queue; Redis unreachable stops the command (exit 2). */
async function openCoordinator(
  url: string,
  flags: RunFlags,
  plan: Plan,
  runId: string,
  connection: Connection,
  report: { note(text: string): void },
): Promise<RemoteItems & { close(): Promise<void> }> {
  const [{ Coordinator }, { shownRedisUrl }, { DEFAULT_QUEUE }] = await Promise.all([
    import('../workers/coordinator.js'),
    import('../scheduler/redis-connection.js'),
    import('../workers/jobs.js'),
  ]);
  const queue = flags.workersQueue ?? cliIo().env.PIPELINE_WORKERS_QUEUE ?? DEFAULT_QUEUE;
  const silence = Number(cliIo().env.PIPELINE_WORKERS_SILENCE_MS);
  const shownUrl = shownRedisUrl(url);
  try {
    const coordinator = await Coordinator.open({
      redisUrl: url,
      shownUrl,
      queue,
      runId,
      gateway: connection.endpoints.baseUrl,
      passEnv: plan.settings.passEnv,
      note: (line) => report.note(line),
      ...(silence > 0 ? { silenceMs: silence, sweepMs: Math.min(5000, silence / 2) } : {}),
    });
    report.note(`coordinating: items go to the workers of queue '${queue}' at ${shownUrl}`);
    return coordinator;
  } catch (error) {
    throw new UsageError(`cannot reach Redis at ${shownUrl} for --workers: ${(error as Error).message}`);
  }
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
