import type { Command } from 'commander';
import { addConnectionOptions, withConnection, type ConnectionFlags } from './connection.js';
import { printJson, printLine } from './output.js';
import { unwrap } from './unwrap.js';

export function registerAccountCommand(program: Command): void {
  addConnectionOptions(program.command('account').description('Check the API key and show the team balance.'))
    .option('--json', 'print JSON')
    .action(async (flags: ConnectionFlags & { json?: boolean }) =>
      withConnection(flags, async ({ client }) => {
        const account = unwrap(await client.account());
        if (flags.json) return printJson({ is_valid: account.isValid, team: account.team ?? null, balance_usd: account.balanceUsd });
        printLine(`key      ${account.isValid ? 'valid' : 'not valid'}${account.team ? ` (team ${account.team})` : ''}`);
        printLine(`balance  $${account.balanceUsd.toFixed(4)}`);
      }),
    );
}
