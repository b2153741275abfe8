import { setMaxListeners } from 'node:events';
import { copyFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { extname, resolve } from 'node:path';
import PQueue from 'p-queue';
import pino from 'pino';
import { withoutCredentials } from '../credentials.js';
import type { EngineContext, WebhookInbox } from '../engine/context.js';
import { DurationModel } from '../engine/durations.js';
import { GatewayPlaces } from '../scheduler/gateway-places.js';
import { type RunResult, runPlan } from '../engine/engine.js';
import type { RemoteItems } from '../engine/remote.js';
import { type EventConsumer, eventStream } from '../engine/events.js';
import { journalConsumer } from '../engine/journal-consumer.js';
import { logConsumer } from '../engine/log-consumer.js';
import { type Reporter, reporterConsumer, silentReporter } from '../engine/reporter.js';
import { SpendMeter } from '../engine/spend.js';
import { Uploads } from '../engine/uploads.js';
import { openWebhookInbox } from '../engine/webhook-inbox.js';
import { LinkedAbort } from '../linked-abort.js';
import { plural } from '../format.js';
import { isBatch, type Plan } from '../plan.js';
import { FailedStepAnnotations } from '../report/failed-step-annotations.js';
import type { Annotation } from '../report/github-commands.js';
import type { JournalFold } from '../store/fold.js';
import { FileJournal, type Journal } from '../store/journal.js';
import type { ReplayedState } from '../store/replay.js';
import { createRun, newRunId, type RunPaths } from '../store/run-store.js';
import { liveSummaryFold } from '../store/summary.js';
import { openRunCache } from './cache-setup.js';
import { type BudgetOptions, type Connection, connect } from './connection.js';
import { type SessionEnvironment, shownPath } from './environment.js';
import { UsageError } from './errors.js';
import { checkBalance, moneyBeforeStart, type RunMoney } from './money.js';
import type { RunOptions, RunTraffic } from './options.js';
import { offlineSchemas } from './recipe.js';
import { type EndedSummary, endRun } from './run-end.js';
import { hashFiles, localFilesOf } from './run-files.js';
import { rowsDigest } from './row-digest.js';
import { StepTraffic } from './step-traffic.js';

/** A run that ended (or stopped), as written down in its folder. */
export interface SessionRun {
  runId: string;
  /** `stopped`: money stopped items (the spending cap, or the gateway's 402); `interrupted`: the signal was aborted. */
  status: RunResult['status'];
  /** The run's folder: journal.jsonl, run.json, report.html, outputs/. */
  runDir: string;
  outputsDir: string;
  /** The recipe as run, kept in the run folder. */
  recipeCopy: string;
  /** The plan the run followed (its rows, steps and settings). */
  plan: Plan;
  /** What the engine answered, item by item. */
  result: RunResult;
  /** run.json: the steps and items (failed, skipped, cached), the files, the spend, the cache counts. */
  summary: EndedSummary;
  /** The report written, if one was. */
  reportPath: string | undefined;
  /** The copies made in `out`. */
  copied: string[];
  /** 429 answers the run met. */
  rateLimited: number;
  /** Each failed step as an error at its place in the recipe, from the run's events. */
  failedSteps: Annotation[];
  /** Step cache hits by step key (`id` or `id[row]`), and gateway answers by step key. */
  counts: {
    cached(stepKey: string): number;
    traffic(stepKey: string): { requests: number; rateLimited: number } | undefined;
  };
}

/** The recipe and its batch file, kept in the run folder so that `resume` runs exactly them. */
export function keepRecipe(
  paths: { recipe: string; batch: string },
  recipeText: string,
  batchPath: string | undefined,
  cwd: string,
): string | null {
  writeFileSync(paths.recipe, recipeText);
  if (!batchPath) return null;
  const kept = `${paths.batch}${extname(batchPath)}`;
  copyFileSync(resolve(cwd, batchPath), kept);
  return kept;
}

/**
 * The requests-per-minute cap of a run: `rpm: N`, else the recipe's `settings.rpm` when it is a
 * number, unless `rpm: 'auto'` says to follow the gateway's headers only.
 */
export function budgetOptions(plan: Plan, options: RunOptions, environment: SessionEnvironment): BudgetOptions {
  // A coordinator shares its budget with its workers: on their Redis unless told another.
  const ownRedis = options.redisUrl ?? environment.env.PIPELINE_REDIS_URL;
  const redisUrl = ownRedis ?? options.workers?.url;
  // The workers' Redis holds the run's jobs: there is no going on without it, and no --redis to drop.
  const shared = {
    home: environment.home,
    ...(redisUrl ? { redisUrl } : {}),
    ...(ownRedis === undefined && options.workers ? { redisHoldsJobs: true } : {}),
  };
  return { ...shared, ...rpmCap(plan, options) };
}

function rpmCap(plan: Plan, options: RunOptions): { maxPerMinute?: number } {
  if (options.rpm === 'auto') return {};
  const cap = options.rpm ?? (typeof plan.settings.rpm === 'number' ? plan.settings.rpm : undefined);
  return cap === undefined ? {} : { maxPerMinute: cap };
}

/** This process, as the journal names the one writing it. */
export const thisProcess = () => ({ pid: process.pid, host: hostname() });

/**
 * Starts a new run of a valid plan and runs it to its end. Mistakes in the options or refusals
 * before the run exists throw UsageError or GatewayRefusal, with nothing sent that costs money.
 */
export async function startRun(
  plan: Plan,
  options: RunOptions,
  environment: SessionEnvironment,
  source: { recipeText: string; batchPath: string | undefined },
): Promise<SessionRun> {
  const money = await moneyBeforeStart(plan, options, environment, false);
  const connection = await connect(options.gateway ?? {}, budgetOptions(plan, options, environment), environment);
  // The key check and the balance are requests too: a run the step cache serves whole makes none.
  if (!money.sendsNothing)
    await checkedOrClosed(connection, plan, (balance) => checkBalance(connection, money, options, balance));
  const runId = newRunId(plan.name, connection.clock.now());
  const paths = createRun(environment.home, runId);
  const batch = keepRecipe(paths, source.recipeText, source.batchPath, environment.cwd);
  const journal = new FileJournal(paths.journal, () => connection.clock.now());
  // run.json is the summary of every line: folded as they are written, not read again at the end.
  const summary = liveSummaryFold();
  journal.readWritten((event) => summary.add(event));
  await journal.appendDurable({
    type: 'run-started',
    owner: thisProcess(),
    run_id: runId,
    recipe: plan.recipePath,
    name: plan.name,
    // A batch's rows are its kept file's: the resume reads them again and checks their digest.
    ...(batch ? { row_count: plan.rows.length, rows_sha256: rowsDigest(plan.rows) } : { rows: [...plan.rows] }),
    sets: options.set ?? [],
    batch,
    gateway: connection.gateway,
    cwd: environment.cwd,
    batch_source: source.batchPath ? resolve(environment.cwd, source.batchPath) : null,
    local_files: hashFiles(localFilesOf(plan)),
    cost: { estimated_usd: money.estimate.usd, lower_bound: money.estimate.lower_bound },
    ...(plan.skippedRows?.length ? { skipped_rows: plan.skippedRows } : {}),
    dag: plan.steps.map((s) => ({
      id: s.id,
      action: s.action,
      depends_on: s.dependsOn,
      ...('model' in s ? { model: s.model.slug } : {}),
    })),
    recipe_outputs: Object.keys(plan.outputs),
  });
  return execute(plan, options, environment, connection, paths, journal, undefined, money, summary);
}

/** The gateway check before a run, then `more` with the balance it read; the connection is closed if either fails. */
export async function checkedOrClosed(
  connection: Connection,
  plan: Plan,
  more: (balance: number | undefined) => Promise<unknown> = async () => undefined,
): Promise<void> {
  // The web tools' and text gateway's addresses too, where the plan calls them.
  const uses = {
    tools: plan.steps.some((step) => step.action === 'web-search' || step.action === 'web-fetch'),
    llm: plan.steps.some((step) => step.action === 'llm'),
  };
  try {
    await more(await connection.check(uses));
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/**
 * What the reporter's footer reads: requests and 429s counted by the meter; the limit is the run's
 * cap, else the one the gateway's headers announce (a limit per minute, as the gateway names it: `rpm`).
 */
function trafficOf(connection: Connection, cap: number | undefined): RunTraffic {
  return {
    perMinute: () => connection.traffic.perMinute(),
    get rateLimited() {
      return connection.traffic.rateLimited;
    },
    limit: () => cap ?? connection.budget.snapshot().limit,
    observe: (listener) => connection.observers.push(listener),
  };
}

/** Runs a plan whose journal is open (a new run's, or a resumed one's with `resume`) to its end. */
export async function execute(
  plan: Plan,
  options: RunOptions,
  environment: SessionEnvironment,
  connection: Connection,
  paths: RunPaths,
  journal: Journal,
  resume: ReplayedState | undefined,
  money: RunMoney,
  /** The summary folded as the journal is written, when it has every line (not a resume's). */
  summary?: JournalFold,
): Promise<SessionRun> {
  const { clock, client } = connection;
  // Until the run's whole stream is built (its reporter comes with it), events go to the journal alone.
  let emit: EventConsumer = journalConsumer(journal);
  connection.traffic.attach((event) => emit(event));
  const log = pino(
    {
      base: { run: paths.id },
      redact: { paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization'], censor: '***' },
    },
    pino.destination({ dest: paths.log, sync: true, mkdir: true }),
  );
  let report: Reporter = silentReporter;
  // Every wait of every task listens to this signal: thousands of listeners are expected. It stops
  // with the caller's (Ctrl-C), or when the journal can take no more: no task is sent unrecorded.
  const stop = new LinkedAbort(options.signal);
  journal.whenFailed((failure) => stop.abort(failure));
  const signal = stop.signal;
  setMaxListeners(0, signal);
  let inbox: (WebhookInbox & { close(): Promise<void> }) | undefined;
  let remote: (RemoteItems & { close(): Promise<void> }) | undefined;
  const env = withoutCredentials(environment.env);
  try {
    report = options.reporter?.(trafficOf(connection, rpmCap(plan, options).maxPerMinute)) ?? silentReporter;
    if (options.webhook) inbox = await openWebhookInbox(options.webhook.listen, options.webhook.url);
    if (options.workers)
      remote = await openCoordinator(options.workers, plan, paths.id, connection, report, environment.env);
    const concurrency = options.concurrency ?? plan.settings.concurrency;
    // On workers, each worker's --concurrency caps its own tasks; nothing waits in the gateway's queue.
    const queueAhead = remote ? 0 : (options.queueAhead ?? plan.settings.queueAhead);
    const cache = openRunCache(
      {
        ...(options.cache?.enabled === false ? { cache: false } : {}),
        ...(options.cache?.refresh ? { refresh: true } : {}),
        ...(options.cache?.dir ? { cacheDir: options.cache.dir } : {}),
        ...(options.cache?.remote !== undefined ? { cacheRemote: options.cache.remote } : {}),
        ...(options.cache?.remoteReadOnly ? { cacheRemoteReadOnly: true } : {}),
      },
      { ...environment, clock, home: resolve(paths.dir, '..', '..') },
      (text) => report.note(text),
      connection.gateway,
      plan.settings.cacheRemote,
    );
    // Answers by row and step, for the table of the job summary: one entry per row of a batch, so only for it.
    const traffic = new StepTraffic();
    if (options.keepRowOutcomes) connection.observers.push(traffic.observe);
    const failedSteps = new FailedStepAnnotations(plan.rows.length, environment.cwd, (text) =>
      environment.secrets.redact(text),
    );
    emit = eventStream(
      journalConsumer(journal),
      reporterConsumer(report, plan.rows.length, () => clock.now()),
      logConsumer(log),
      failedSteps.consume,
    );
    const ctx: EngineContext = {
      plan,
      client,
      clock,
      runId: paths.id,
      runDir: paths.dir,
      outputsDir: paths.outputs,
      // The tasks beyond `concurrency` wait in the gateway's own queue (settings.queue_ahead).
      tasks: new PQueue({ concurrency: concurrency + queueAhead }),
      reads: connection.reads,
      hasSpareRoom: () => connection.budget.hasSpareRoom(),
      // Tasks are queued only beyond `concurrency`: then their starts are foreseen by replaying the
      // gateway's places, where this run is their one user (processes sharing a budget share them).
      ...(queueAhead > 0 && !inbox && !connection.sharedBudget
        ? { places: new GatewayPlaces(concurrency, () => clock.now()) }
        : {}),
      durations: new DurationModel(await connection.durations.load(), (slug, learned) =>
        connection.durations.record(slug, learned),
      ),
      uploads: new Uploads(client, emit, clock, resume?.uploads ?? []),
      downloads: new Map(resume?.downloads ?? []),
      modelSchema: offlineSchemas(environment.home),
      emit,
      signal,
      resubmitUnknown: Boolean(options.resubmitUnknown),
      ...(options.keepRowOutcomes ? {} : { forgetRows: true }),
      env,
      spend: new SpendMeter(money.pricing, {
        committedUsd: resume?.committedUsd ?? 0,
        ...(money.capUsd !== undefined ? { capUsd: money.capUsd } : {}),
      }),
      ...(resume ? { resume } : {}),
      ...(inbox ? { webhook: inbox } : {}),
      ...(cache ? { cache } : {}),
      ...(remote ? { remote } : {}),
      ...(options.keepRowOutcomes ? { withinStep: traffic.within } : {}),
    };
    const slots = remote
      ? 'tasks on the workers'
      : `${concurrency} tasks at once${queueAhead > 0 ? ` and ${queueAhead} more in the gateway's queue` : ''}`;
    report.note(
      `${resume ? 'resuming' : 'run'} ${paths.id}: ${plural(plan.steps.length, 'step')}${isBatch(plan.rows) ? ` × ${plural(plan.rows.length, 'row')}` : ''}, ${slots}, logs in ${shownPath(paths.log, environment.cwd)}`,
    );
    // A step that waited for a durable line may end the run with the journal's error itself.
    const result = await runPlan(ctx).catch((error: unknown) => {
      throw journal.failure ? stoppedByJournal(journal.failure, paths.id) : error;
    });
    report.close();
    if (journal.failure) throw stoppedByJournal(journal.failure, paths.id);
    connection.traffic.flush();
    const ended = await endRun(
      { result, plan, paths, journal, log, ...(summary ? { summary } : {}) },
      { ...options, cwd: environment.cwd, warn: (text) => environment.warn(text) },
      cache?.counts,
    );
    return {
      runId: paths.id,
      status: result.status,
      runDir: paths.dir,
      outputsDir: paths.outputs,
      recipeCopy: paths.recipe,
      plan,
      result,
      ...ended,
      rateLimited: connection.traffic.rateLimited,
      failedSteps: failedSteps.annotations(),
      counts: {
        cached: (key: string) => cache?.hitKeys.get(key)?.length ?? 0,
        traffic: (key: string) => traffic.byStep.get(key),
      },
    };
  } finally {
    stop.release();
    journal.close();
    await inbox?.close();
    await remote?.close();
    await connection.durations.flush().catch(() => {});
    await connection.close();
  }
}

/** The run stopped because its journal could take no more lines: what happened, and how to go on. */
function stoppedByJournal(failure: Error, runId: string): Error {
  return new Error(
    `${failure.message}. The run stopped: no task was sent after the last line it could write. ` +
      `Make room, then resume it: pipeline resume ${runId}`,
  );
}

/** `workers`: the coordinator of this run, on the workers' queue; Redis unreachable stops the run (a UsageError). */
async function openCoordinator(
  workers: { url: string; queue?: string },
  plan: Plan,
  runId: string,
  connection: Connection,
  report: { note(text: string): void },
  env: NodeJS.ProcessEnv,
): Promise<RemoteItems & { close(): Promise<void> }> {
  const [{ Coordinator }, { shownRedisUrl }, { DEFAULT_QUEUE }] = await Promise.all([
    import('../workers/coordinator.js'),
    import('../scheduler/redis-url.js'),
    import('../workers/jobs.js'),
  ]);
  const queue = workers.queue ?? env.PIPELINE_WORKERS_QUEUE ?? DEFAULT_QUEUE;
  const silence = Number(env.PIPELINE_WORKERS_SILENCE_MS);
  const shownUrl = shownRedisUrl(workers.url);
  try {
    const coordinator = await Coordinator.open({
      redisUrl: workers.url,
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
