import type { Command } from 'commander';
import type { LocalGatewayOptions } from '../local-gateway/index.js';
import { UsageError } from './errors.js';
import { numberFlag } from './flags.js';
import { cliIo } from './io.js';

function keyPair(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.lastIndexOf('=');
  if (at <= 0 || at === value.length - 1)
    throw new UsageError(`--key takes KEY=TEAM, got ${JSON.stringify(value.replace(/=.*$/, '=…'))}`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

function pricePair(value: string, previous: Record<string, number> | undefined): Record<string, number> {
  const at = value.lastIndexOf('=');
  const price = Number(value.slice(at + 1));
  if (at <= 0 || !Number.isFinite(price) || price < 0)
    throw new UsageError(`--price takes SLUG=USD, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, at)]: price };
}

/** Flags named as the gateway's options are passed on as they are; the others are renamed below. */
type ServeFlags = Pick<
  LocalGatewayOptions,
  | 'rpm'
  | 'windowSeconds'
  | 'maxConcurrent'
  | 'latencyScale'
  | 'latencyJitter'
  | 'failRate'
  | 'errorRate'
  | 'seed'
  | 'dataDir'
> & {
  host: string;
  port: number;
  key?: Record<string, string>;
  balance?: number;
  price?: Record<string, number>;
  resultTtl?: number;
  fileTtl?: number;
  ffmpeg: boolean;
};

export function registerGatewayCommand(program: Command): void {
  const gateway = program
    .command('gateway')
    .description('The built-in local gateway: every endpoint of the hosted interface, served on this machine.');
  gateway
    .command('serve')
    .description(
      'Serve the local gateway until SIGINT or SIGTERM. Prints one line of JSON with its URLs and key, then serves.',
    )
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option(
      '--port <port>',
      'port to bind (0 picks a free one)',
      numberFlag('--port', { integer: true, min: 0, max: 65535 }),
      8787,
    )
    .option('--key <KEY=TEAM>', 'an API key and its team (repeatable; default local-dev-key=local)', keyPair)
    .option(
      '--rpm <n>',
      'requests per rate-limit window per key (default 100)',
      numberFlag('--rpm', { integer: true, min: 1 }),
    )
    .option(
      '--window-seconds <s>',
      'length of a rate-limit window (default 60)',
      numberFlag('--window-seconds', { integer: true, min: 1, max: 86400 }),
    )
    .option(
      '--max-concurrent <n>',
      'tasks running at once per team; more wait in pending (default 10)',
      numberFlag('--max-concurrent', { integer: true, min: 1 }),
    )
    .option(
      '--latency-scale <f>',
      'multiplies every processing time; 0 allowed (default 1)',
      numberFlag('--latency-scale', { min: 0 }),
    )
    .option(
      '--latency-jitter <f>',
      'relative spread of processing times; 0 makes them fixed (default 0.2)',
      numberFlag('--latency-jitter', { min: 0, max: 1 }),
    )
    .option(
      '--fail-rate <f>',
      'share of tasks that end failed (default 0)',
      numberFlag('--fail-rate', { min: 0, max: 1 }),
    )
    .option(
      '--error-rate <f>',
      'share of authenticated requests answered 500 or 503 (default 0)',
      numberFlag('--error-rate', { min: 0, max: 1 }),
    )
    .option(
      '--balance <usd>',
      'starting balance of each team in USD (default 100)',
      numberFlag('--balance', { min: 0 }),
    )
    .option('--price <SLUG=USD>', 'price per image or per video second of a model (repeatable)', pricePair)
    .option(
      '--result-ttl <s>',
      'seconds a task result stays readable (default 86400)',
      numberFlag('--result-ttl', { min: 1 }),
    )
    .option('--file-ttl <s>', 'seconds an uploaded file is kept (default 604800)', numberFlag('--file-ttl', { min: 1 }))
    .option(
      '--seed <n>',
      'seed of every random choice, for reproducible runs',
      numberFlag('--seed', { integer: true, min: 0, max: 2 ** 31 - 1 }),
    )
    .option(
      '--data-dir <dir>',
      'where tasks, uploads and results are kept; a gateway started again on it answers for them ' +
        '(default: a temporary folder, removed on exit)',
    )
    .option('--no-ffmpeg', 'never use ffmpeg for video output, even when one is available')
    .action(async (flags: ServeFlags) => {
      // commander sets only the flags that were given, so the spread carries no undefined values.
      const { key, balance, price, resultTtl, fileTtl, ffmpeg, ...same } = flags;
      const options: LocalGatewayOptions = {
        ...same,
        useFfmpeg: ffmpeg,
        ...(key && { keys: key }),
        ...(balance !== undefined && { balanceUsd: balance }),
        ...(price && { prices: price }),
        ...(resultTtl !== undefined && { resultTtlSeconds: resultTtl }),
        ...(fileTtl !== undefined && { fileTtlSeconds: fileTtl }),
      };
      // Loaded here, not at start-up: every other command starts faster without fastify.
      const { PortInUseError, startLocalGateway } = await import('../local-gateway/index.js');
      let gatewayServer: Awaited<ReturnType<typeof startLocalGateway>>;
      try {
        gatewayServer = await startLocalGateway(options);
      } catch (error) {
        if (error instanceof PortInUseError) throw error;
        if (error instanceof TypeError) throw new UsageError(error.message);
        throw error;
      }
      const running = gatewayServer;
      // Listen for the stop signals before announcing the URLs: whoever reads the line may signal at once.
      const stopped = new Promise<void>((resolve) => {
        const stopListening = cliIo().interrupts.listen(() => {
          stopListening();
          resolve();
        });
      });
      cliIo().stdout.write(
        `${JSON.stringify({ base_url: running.baseUrl, tool_url: running.toolUrl, llm_url: running.llmUrl, schema_url: running.schemaUrl, api_key: running.apiKey })}\n`,
      );
      await stopped;
      await running.close();
    });
}
