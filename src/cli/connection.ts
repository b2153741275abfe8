import { type Command, Option } from 'commander';
import type { Clock } from '../clock.js';
import * as session from '../session/connection.js';
import type { BudgetOptions, Connection, GatewayOptions } from '../session/connection.js';
import { sessionEnvironment } from './session-environment.js';
import { pipelineHome } from './pipeline-home.js';
import { cliIo } from './io.js';

export type { BudgetOptions, Connection } from '../session/connection.js';

/** Flags every command that talks to the gateway takes: the session's gateway options, as the command line gives them. */
export type ConnectionFlags = GatewayOptions;

export function addConnectionOptions(command: Command, { local = true } = {}): Command {
  // A command that cannot use the built-in gateway (a worker) still takes --local, to refuse it with
  // a reason, but does not offer it in its help.
  const localOption = new Option('--local', 'start the built-in gateway in this process and use it');
  return command
    .addOption(local ? localOption : localOption.hideHelp())
    .option('--base-url <url>', 'media API base, ending in /api/v1 (env PIPELINE_BASE_URL)')
    .option('--tool-url <url>', 'web tools base (env PIPELINE_TOOL_URL; default: the base origin + /tools)')
    .option('--llm-url <url>', 'text gateway base (env PIPELINE_LLM_URL; default: the base origin + /llm)')
    .option(
      '--schema-url <url>',
      'origin of the public schema endpoint (env PIPELINE_SCHEMA_URL; default: the base origin)',
    )
    .option('--api-key <key>', 'API key (env PIPELINE_API_KEY, preferred: a flag shows in the process list)');
}

/** Builds the real client behind one shared budget; with --local, starts the built-in gateway first. */
export async function connect(
  flags: ConnectionFlags,
  budgetOptions: BudgetOptions = {},
  env: NodeJS.ProcessEnv = cliIo().env,
  clock: Clock = cliIo().clock,
): Promise<Connection> {
  return session.connect(flags, budgetOptions, { ...sessionEnvironment(pipelineHome(env)), env, clock });
}

/** Runs `work` with a connection and always closes it. */
export async function withConnection<T>(
  flags: ConnectionFlags,
  work: (connection: Connection) => Promise<T>,
): Promise<T> {
  // Its few requests count in the key's shared budget too, where the runs on the key share one.
  const redisUrl = cliIo().env.PIPELINE_REDIS_URL;
  const connection = await connect(flags, redisUrl ? { redisUrl, redisOptional: true } : {});
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}
