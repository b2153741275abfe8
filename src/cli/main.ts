#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerGatewayCommand } from './gateway-serve.js';
import { UsageError } from './usage-error.js';

const program = new Command()
  .name('pipeline')
  .description('Run YAML recipes of web, LLM, image and video generation steps against an asynchronous, rate-limited generation gateway.')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerGatewayCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with exit code 0.
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  if (error instanceof UsageError) {
    process.stderr.write(`pipeline: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`pipeline: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
