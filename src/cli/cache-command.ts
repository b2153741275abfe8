import type { Command } from 'commander';
import { CacheStore } from '../cache/store.js';
import { parseDuration } from '../duration.js';
import { cacheDir } from './cache-setup.js';
import { UsageError } from './errors.js';
import { printJson, printLine, printTable, shown } from './output.js';
import { pipelineHome } from './pipeline-home.js';

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

function openStore(flags: { cacheDir?: string }): CacheStore {
  const dir = cacheDir(flags.cacheDir, pipelineHome());
  const store = CacheStore.open(dir, {
    now: Date.now,
    warn: (message) => process.stderr.write(`warning: ${message}\n`),
  });
  if (!store.ok) throw new UsageError(store.error);
  return store.value;
}

async function list(flags: { cacheDir?: string; json?: boolean }): Promise<void> {
  const store = openStore(flags);
  const entries = await store.list();
  const rows = entries.map((e) => ({
    key: e.key,
    action: e.action,
    created_at: e.created_at,
    files: e.files.length,
    bytes: e.files.reduce((sum, f) => sum + f.bytes, 0),
    saves: e.saved,
  }));
  if (flags.json) return printJson({ dir: store.dir, entries: rows });
  if (rows.length === 0) return printLine(`no entries in ${shown(store.dir)}`);
  printTable(
    ['KEY', 'ACTION', 'STORED', 'FILES', 'BYTES'],
    rows.map((r) => [r.key.slice(0, 12), r.action, when(r.created_at), r.files, r.bytes]),
  );
}

async function prune(flags: { cacheDir?: string; json?: boolean; olderThan?: string }): Promise<void> {
  const olderThanMs = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan);
  if (olderThanMs === undefined)
    throw new UsageError(`--older-than takes a duration such as 30d or 12h, got ${JSON.stringify(flags.olderThan)}`);
  const removed = await openStore(flags).prune(olderThanMs);
  if (flags.json) return printJson({ removed });
  printLine(`removed ${removed.entries} entries and ${removed.blobs} files (${removed.bytes} bytes)`);
}

async function clear(flags: { cacheDir?: string; json?: boolean }): Promise<void> {
  const removed = await openStore(flags).clear();
  if (flags.json) return printJson({ removed });
  printLine(`removed ${removed.entries} entries`);
}

export function registerCacheCommand(program: Command): void {
  const cache = program
    .command('cache')
    .description('The step cache: list its entries, prune old ones, or clear it.')
    .option('--cache-dir <dir>', 'the cache folder (default: $PIPELINE_CACHE_DIR, else $PIPELINE_HOME/cache)');
  const withParent = <T>(flags: T, command: Command) => ({ ...(command.parent?.opts() ?? {}), ...flags });
  cache
    .command('list')
    .description('Every entry: its key, action, age and files.')
    .option('--json', 'print JSON')
    .action((flags, command: Command) => list(withParent(flags, command)));
  cache
    .command('prune')
    .description('Remove entries stored longer ago than --older-than, and the files only they used.')
    .requiredOption('--older-than <duration>', 'such as 30d or 12h')
    .option('--json', 'print JSON')
    .action((flags, command: Command) => prune(withParent(flags, command)));
  cache
    .command('clear')
    .description('Remove every entry and file.')
    .option('--json', 'print JSON')
    .action((flags, command: Command) => clear(withParent(flags, command)));
}
