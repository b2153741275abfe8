import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { RemoteTier } from '../cache/remote-tier.js';
import type { CacheEntry, CacheStore } from '../cache/store.js';
import { parseDuration } from '../duration.js';
import { registerSecret } from './output.js';
import { UsageError } from './errors.js';
import { printJson, printLine, printTable, redact, shown } from './output.js';
import { pipelineHome } from './pipeline-home.js';
import { cliIo } from './io.js';

/** Every line passes the secret filter: a remote's error could quote anything. */
const warning = (message: string) => cliIo().stderr.write(redact(`warning: ${message}\n`));

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

/**
 * The cache's modules, loaded when a cache command runs: the local store, the remote tier and the
 * S3 client's wrapper are a dozen modules that every other command would load for nothing.
 */
async function cacheModules() {
  const [{ CacheStore }, setup] = await Promise.all([import('../cache/store.js'), import('../session/cache-setup.js')]);
  return { CacheStore, ...setup };
}

/** What the commands do with the local step cache. */
type LocalCache = Pick<CacheStore, 'dir' | 'list' | 'prune' | 'clear' | 'forgetShared'>;

const NOTHING_REMOVED = { entries: 0, blobs: 0, bytes: 0 };

/** Where the local cache would be, when there is none: it lists nothing and has nothing to remove. */
const absentCache = (dir: string): LocalCache => ({
  dir,
  list: async () => [],
  prune: async () => NOTHING_REMOVED,
  clear: async () => ({ entries: 0 }),
  forgetShared: async () => {},
});

/** The local step cache, or an empty one where there is none: listing, pruning or clearing it makes no folder. */
async function openStore(flags: { cacheDir?: string }): Promise<LocalCache> {
  const { CacheStore, cacheDir } = await cacheModules();
  const dir = cacheDir(flags.cacheDir, pipelineHome(), cliIo().env);
  if (!existsSync(dir)) return absentCache(dir);
  const { clock } = cliIo();
  const store = CacheStore.open(dir, { now: () => clock.now(), warn: warning });
  if (!store.ok) throw new UsageError(store.error);
  return store.value;
}

interface CacheFlags {
  cacheDir?: string;
  cacheRemote?: string;
  json?: boolean;
  /** `--remote`: the remote cache, not the local one. */
  remote?: boolean;
}

/** The remote of `--cache-remote`, else PIPELINE_CACHE_REMOTE; a usage error when neither names one. */
async function openRemote(flags: CacheFlags): Promise<RemoteTier> {
  const { openRemoteTier, remoteChoice } = await cacheModules();
  const choice = remoteChoice(
    { ...(flags.cacheRemote ? { cacheRemote: flags.cacheRemote } : {}) },
    undefined,
    cliIo().env,
  );
  if (!choice.ok) throw new UsageError(choice.error);
  if (!choice.value)
    throw new UsageError('--remote needs a remote cache: --cache-remote s3://bucket/prefix, or PIPELINE_CACHE_REMOTE');
  const { clock } = cliIo();
  return openRemoteTier(choice.value, { now: () => clock.now(), warn: warning }, cliIo().env, {
    register: registerSecret,
  });
}

/** A call to the remote whose whole point is the remote: its failure is the command's, exit 1. */
async function onRemote<T>(remote: RemoteTier, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const { name, message } = error as Error;
    throw new Error(`remote cache ${remote.shown}: ${name && !message.startsWith(name) ? `${name}: ` : ''}${message}`);
  }
}

async function list(flags: CacheFlags): Promise<void> {
  let entries: CacheEntry[];
  let where: { dir: string } | { remote: string };
  if (flags.remote) {
    const remote = await openRemote(flags);
    entries = await onRemote(remote, () => remote.list());
    where = { remote: remote.location };
  } else {
    const store = await openStore(flags);
    entries = await store.list();
    where = { dir: store.dir };
  }
  const rows = entries.map((e) => ({
    key: e.key,
    action: e.action,
    created_at: e.created_at,
    files: e.files.length,
    bytes: e.files.reduce((sum, f) => sum + f.bytes, 0),
    saves: e.saved,
  }));
  if (flags.json) return printJson({ ...where, entries: rows });
  if (rows.length === 0) return printLine(`no entries in ${'dir' in where ? shown(where.dir) : where.remote}`);
  printTable(
    ['KEY', 'ACTION', 'STORED', 'FILES', 'BYTES'],
    rows.map((r) => [r.key.slice(0, 12), r.action, when(r.created_at), r.files, r.bytes]),
  );
}

async function prune(flags: CacheFlags & { olderThan?: string }): Promise<void> {
  const olderThanMs = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan);
  if (olderThanMs === undefined)
    throw new UsageError(`--older-than takes a duration such as 30d or 12h, got ${JSON.stringify(flags.olderThan)}`);
  let removed: { entries: number; blobs: number; bytes: number };
  if (flags.remote) {
    const remote = await openRemote(flags);
    // A job given a read-only remote (a pull request's) must not delete in it either.
    if (!remote.canWrite)
      throw new UsageError(
        `PIPELINE_CACHE_REMOTE_READ_ONLY is true: a read-only remote is never written, and prune --remote deletes in ${remote.location}; nothing was removed`,
      );
    removed = await onRemote(remote, () => remote.prune(olderThanMs));
    // What this machine remembers of the remote's entries is out of date: its next hits share them again.
    await (await openStore(flags)).forgetShared(remote.location);
  } else {
    removed = await (await openStore(flags)).prune(olderThanMs);
  }
  if (flags.json) return printJson({ removed });
  printLine(`removed ${removed.entries} entries and ${removed.blobs} files (${removed.bytes} bytes)`);
}

async function clear(flags: { cacheDir?: string; json?: boolean }): Promise<void> {
  const removed = await (await openStore(flags)).clear();
  if (flags.json) return printJson({ removed });
  printLine(`removed ${removed.entries} entries`);
}

export function registerCacheCommand(program: Command): void {
  const cache = program
    .command('cache')
    .description('The step cache: list its entries, prune old ones, or clear it.')
    .option('--cache-dir <dir>', 'the cache folder (default: $PIPELINE_CACHE_DIR, else $PIPELINE_HOME/cache)')
    .option(
      '--cache-remote <url>',
      'the remote cache for --remote, s3://bucket/prefix (default: $PIPELINE_CACHE_REMOTE)',
    );
  const withParent = <T>(flags: T, command: Command) => ({ ...(command.parent?.opts() ?? {}), ...flags });
  cache
    .command('list')
    .description('Every entry: its key, action, age and files.')
    .option('--remote', 'list the remote cache (checked entries only) instead of the local one')
    .option('--json', 'print JSON')
    .action((flags, command: Command) => list(withParent(flags, command)));
  cache
    .command('prune')
    .description('Remove entries no run has stored or used for longer than --older-than, and the files only they used.')
    .requiredOption('--older-than <duration>', 'such as 30d or 12h')
    .option('--remote', 'prune the remote cache (needs the right to delete there) instead of the local one')
    .option('--json', 'print JSON')
    .action((flags, command: Command) => prune(withParent(flags, command)));
  cache
    .command('clear')
    .description('Remove every entry and file.')
    .option('--json', 'print JSON')
    .action((flags, command: Command) => clear(withParent(flags, command)));
}
