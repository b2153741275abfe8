import { join, resolve } from 'node:path';
import { RemoteTier } from '../cache/remote-tier.js';
import { parseRemoteUrl, type RemoteAddress } from '../cache/remote-url.js';
import { S3ObjectStore } from '../cache/s3-object-store.js';
import { CacheStore } from '../cache/store.js';
import { TieredCache } from '../cache/tiered-cache.js';
import type { Clock } from '../clock.js';
import { RunCache } from '../engine/run-cache.js';
import { err, ok, type Result } from '../result.js';
import { yesNo } from '../yes-no.js';
import type { Secrets, SessionEnvironment } from './environment.js';

/** The step cache folder: `--cache-dir`, else PIPELINE_CACHE_DIR, else `cache` in the pipeline home. */
export function cacheDir(flag: string | undefined, home: string, env: NodeJS.ProcessEnv): string {
  return flag ?? env.PIPELINE_CACHE_DIR ?? join(home, 'cache');
}

export interface RemoteFlags {
  /** `--cache-remote URL`, or false with `--no-cache-remote`. */
  cacheRemote?: string | false;
  /** `--cache-remote-read-only`. */
  cacheRemoteReadOnly?: boolean;
}

/** The remote cache a command uses, as its flags, the environment and the recipe say. */
export interface RemoteChoice {
  address: RemoteAddress;
  readOnly: boolean;
  signingKey: string | undefined;
}

/**
 * The remote tier's address and mode: `--cache-remote`, else PIPELINE_CACHE_REMOTE, else the
 * recipe's `settings.cache_remote`; none with `--no-cache-remote`. Read-only with
 * `--cache-remote-read-only` or PIPELINE_CACHE_REMOTE_READ_ONLY=true. An address that does not
 * read is an error of the flag or variable that gave it.
 */
export function remoteChoice(
  flags: RemoteFlags,
  recipeRemote: string | undefined,
  env: NodeJS.ProcessEnv,
): Result<RemoteChoice | undefined, string> {
  if (flags.cacheRemote === false) return ok(undefined);
  const [source, url] =
    flags.cacheRemote !== undefined
      ? ['--cache-remote', flags.cacheRemote]
      : env.PIPELINE_CACHE_REMOTE
        ? ['PIPELINE_CACHE_REMOTE', env.PIPELINE_CACHE_REMOTE]
        : ['settings.cache_remote', recipeRemote];
  if (url === undefined) return ok(undefined);
  const address = parseRemoteUrl(url);
  if (!address.ok) return err(`${source}: ${address.error}`);
  // A read-only job that misspells its "true" must not write to the bucket it was kept from.
  const readOnly = yesNo('PIPELINE_CACHE_REMOTE_READ_ONLY', env.PIPELINE_CACHE_REMOTE_READ_ONLY);
  if (!readOnly.ok) return readOnly;
  const signingKey = env.PIPELINE_CACHE_SIGNING_KEY || undefined;
  return ok({
    address: address.value,
    readOnly: Boolean(flags.cacheRemoteReadOnly) || readOnly.value,
    signingKey,
  });
}

/** The remote tier of a choice. The secrets it may meet are registered first, so no message can print them. */
export function openRemoteTier(
  choice: RemoteChoice,
  options: { now: () => number; warn: (message: string) => void },
  env: NodeJS.ProcessEnv,
  secrets: Pick<Secrets, 'register'>,
): RemoteTier {
  for (const name of ['PIPELINE_CACHE_SIGNING_KEY', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
    secrets.register(env[name]);
  return new RemoteTier(new S3ObjectStore(choice.address, env), {
    readOnly: choice.readOnly,
    signingKey: choice.signingKey,
    ...options,
  });
}

/**
 * The run's step cache, or none: with `--no-cache`, with `settings.cache: false` and no step that
 * asks for it, or when the folder cannot be written to. That last is said once, and the run goes
 * on without a cache rather than failing: a cache is an optimisation, never a requirement. A remote
 * tier goes behind the local one when a remote is given (its address was checked at the door).
 */
export function openRunCache(
  flags: { cache?: boolean; refresh?: boolean; cacheDir?: string } & RemoteFlags,
  environment: Pick<SessionEnvironment, 'env' | 'cwd' | 'home' | 'secrets'> & { clock: Clock },
  say: (text: string) => void,
  gateway: string,
  recipeRemote?: string,
): RunCache | undefined {
  if (flags.cache === false) return undefined;
  const { env, clock, home, secrets } = environment;
  const dir = resolve(environment.cwd, cacheDir(flags.cacheDir, home, env));
  const warned = new Set<string>();
  const warn = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    say(`⚠ ${message}`);
  };
  const now = () => clock.now();
  const store = CacheStore.open(dir, { now, warn });
  if (!store.ok) {
    say(`⚠ ${store.error}; running without the step cache`);
    return undefined;
  }
  const choice = remoteChoice(flags, recipeRemote, env);
  if (!choice.ok) say(`⚠ ${choice.error}; running with the local cache only`);
  const remote = choice.ok && choice.value ? openRemoteTier(choice.value, { now, warn }, env, secrets) : undefined;
  if (remote)
    say(
      `step cache: ${remote.location} behind the local cache${choice.ok && choice.value?.readOnly ? ' (read-only)' : ''}`,
    );
  return new RunCache(new TieredCache(store.value, remote), { read: !flags.refresh, write: true }, warn, gateway);
}
