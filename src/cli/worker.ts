import type { Command } from 'commander';
import { addConnectionOptions, type ConnectionFlags } from './connection.js';
import { UsageError } from './errors.js';
import { numberFlag } from './flags.js';
import { cliIo } from './io.js';
import { DEFAULT_TAKEOVER_S } from '../workers/jobs.js';
import { redact } from './output.js';
import { pipelineHome } from './pipeline-home.js';

interface WorkerFlags extends ConnectionFlags {
  redis?: string;
  concurrency: number;
  queue?: string;
  rpm?: number;
  takeoverAfter: number;
}

/** `pipeline worker`: runs the items any `pipeline run --workers` queues on the same Redis, until stopped. */
export function registerWorkerCommand(program: Command): void {
  addConnectionOptions(
    program
      .command('worker')
      .description(
        "Run the items of any `pipeline run --workers` on the same Redis (BullMQ), with this machine's own key, until SIGINT or SIGTERM.",
      ),
    { local: false },
  )
    .option('--redis <url>', 'the Redis the runs queue their items on, and the shared budget (env PIPELINE_REDIS_URL)')
    .option('--concurrency <n>', 'items at once', numberFlag('--concurrency', { integer: true, min: 1 }), 4)
    .option('--queue <name>', 'the queue to take items from (default: $PIPELINE_WORKERS_QUEUE, else pipeline)')
    .option(
      '--rpm <n>',
      "requests per minute: a cap below the gateway's limit, counted over every process on the key",
      numberFlag('--rpm', { integer: true, min: 1 }),
    )
    .option(
      '--takeover-after <seconds>',
      'seconds without a sign of life after which this worker counts as lost and another takes its jobs over',
      numberFlag('--takeover-after', { min: 1, max: 3600 }),
      DEFAULT_TAKEOVER_S,
    )
    .action(async (flags: WorkerFlags) => {
      const io = cliIo();
      const url = flags.redis ?? io.env.PIPELINE_REDIS_URL;
      if (!url)
        throw new UsageError('pipeline worker needs --redis URL (or PIPELINE_REDIS_URL): the Redis the runs queue on');
      if (flags.local)
        throw new UsageError('a worker uses the gateway of the runs it serves: set PIPELINE_BASE_URL, not --local');
      const [
        { connect },
        { checkRedisUrl, shownRedisUrl },
        { startWorker },
        { DEFAULT_QUEUE },
        { withoutCredentials },
      ] = await Promise.all([
        import('./connection.js'),
        import('../scheduler/redis-url.js'),
        import('../workers/worker.js'),
        import('../workers/jobs.js'),
        import('../credentials.js'),
      ]);
      const checked = checkRedisUrl(url, '--redis (or PIPELINE_REDIS_URL)');
      if (!checked.ok) throw new UsageError(checked.error);
      const connection = await connect(flags, {
        redisUrl: url,
        redisHoldsJobs: true,
        home: pipelineHome(),
        ...(flags.rpm ? { maxPerMinute: flags.rpm } : {}),
      });
      const say = (line: string) => io.stderr.write(`${redact(`worker: ${line}`)}\n`);
      let worker: Awaited<ReturnType<typeof startWorker>>;
      try {
        // An unreachable gateway or a refused key ends the command before any job is taken (exit 1).
        await connection.check();
      } catch (error) {
        await connection.close();
        throw error;
      }
      try {
        worker = await startWorker({
          redisUrl: url,
          shownUrl: shownRedisUrl(url),
          queue: flags.queue ?? io.env.PIPELINE_WORKERS_QUEUE ?? DEFAULT_QUEUE,
          concurrency: flags.concurrency,
          takeoverMs: flags.takeoverAfter * 1000,
          client: connection.client,
          clock: connection.clock,
          gateway: connection.endpoints.baseUrl,
          env: withoutCredentials(io.env),
          say,
        });
      } catch (error) {
        await connection.close();
        throw new UsageError(`cannot start the worker: ${(error as Error).message}`);
      }
      let stops = 0;
      const stop = () => {
        if (++stops > 1) io.interrupts.quitNow(130);
        say('stopping: taking no new jobs, finishing those in hand (again to quit at once)');
        void worker.close();
      };
      const stopListening = io.interrupts.listen(stop);
      await worker.closed;
      stopListening();
      await worker.close();
      await connection.close();
      say(`stopped after ${worker.done} jobs`);
    });
}
