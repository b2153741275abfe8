import { endpointsOf } from './http.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import pino from 'pino';
import { probeFile } from '../../src/files/probe.js';
import type { EngineContext } from '../../src/engine/context.js';
import { GatewayPlaces } from '../../src/scheduler/gateway-places.js';
import { DurationModel } from '../../src/engine/durations.js';
import { eventStream } from '../../src/engine/events.js';
import { journalConsumer } from '../../src/engine/journal-consumer.js';
import { logConsumer } from '../../src/engine/log-consumer.js';
import { reporterConsumer, silentReporter, type Reporter } from '../../src/engine/reporter.js';
import { Uploads } from '../../src/engine/uploads.js';
import { HttpGatewayClient, type GatewayClientOptions } from '../../src/gateway/client.js';
import type { LocalGateway } from '../../src/local-gateway/index.js';
import { readBundledSchema, readRecipeLanguageSchemas } from '../../src/model-schemas/bundled.js';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { RateBudget } from '../../src/scheduler/budget.js';
import { ReadForecast } from '../../src/scheduler/read-forecast.js';
import type { Clock } from '../../src/clock.js';
import { FileJournal, readJournal } from '../../src/store/journal.js';

/** An engine context wired to a real gateway, in this process, on the given clock. */
export async function engineFor(
  recipe: string,
  gateway: LocalGateway,
  clock: Clock,
  options: { concurrency?: number; sets?: string[]; report?: Reporter; client?: Partial<GatewayClientOptions> } = {},
) {
  const analyzed = analyze(
    { path: 'recipes/test.yaml', text: recipe, cwd: process.cwd(), ...(options.sets ? { sets: options.sets } : {}) },
    { modelSchema: readBundledSchema, schemas: readRecipeLanguageSchemas(), probe: probeFile },
  );
  if (!analyzed.ok) throw new Error(formatDiagnostics(analyzed.error));
  const plan = analyzed.value;
  // Wired as a run's session wires them: the budget knows the reads the tasks expect.
  const reads = new ReadForecast();
  const budget = new RateBudget({ clock, random: () => 0.5, forecast: reads });
  const client = new HttpGatewayClient({
    endpoints: endpointsOf(gateway),
    apiKey: gateway.apiKey,
    clock,
    gate: budget,
    onRateLimit: budget.observe,
    random: () => 0.5,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...options.client,
  });
  const dir = await mkdtemp(join(tmpdir(), 'engine-'));
  const journal = new FileJournal(join(dir, 'journal.jsonl'), () => clock.now());
  const controller = new AbortController();
  const report = options.report ?? silentReporter;
  const ctx: EngineContext = {
    plan,
    client,
    clock,
    runId: 'test-run',
    runDir: dir,
    outputsDir: dir,
    tasks: new PQueue({ concurrency: (options.concurrency ?? plan.settings.concurrency) + plan.settings.queueAhead }),
    // As src/session/run.ts: with queue_ahead, the gateway's places are replayed.
    ...(plan.settings.queueAhead > 0
      ? { places: new GatewayPlaces(options.concurrency ?? plan.settings.concurrency, () => clock.now()) }
      : {}),
    durations: new DurationModel(),
    reads,
    hasSpareRoom: () => budget.hasSpareRoom(),
    // Through ctx.emit, so that a test that gives the run a stream of its own sees the uploads too.
    uploads: new Uploads(client, (event) => ctx.emit(event), clock),
    downloads: new Map(),
    modelSchema: readBundledSchema,
    // The standard stream: the journal, the console reporter given (or none), a silent log.
    emit: eventStream(
      journalConsumer(journal),
      reporterConsumer(report, plan.rows.length, () => clock.now()),
      logConsumer(pino({ enabled: false })),
    ),
    signal: controller.signal,
    resubmitUnknown: false,
    env: {},
  };
  return {
    ctx,
    budget,
    controller,
    journal,
    journalPath: join(dir, 'journal.jsonl'),
    /** The journal's events, after writing out what is pending (the journal takes no more). */
    events() {
      journal.close();
      return readJournal(join(dir, 'journal.jsonl'));
    },
    async close() {
      journal.close();
      await client.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
