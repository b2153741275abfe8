/**
 * The environment variables that hold a credential `pipeline` itself reads: the gateway key, the
 * Redis URL (whose password is part of it), the remote step cache's signing key and the secret
 * parts of its AWS credentials (the key id and the address of the bucket are no secret). None of
 * them reaches an expression's `env`, a `run:` step's environment, a journal, a report or a message.
 */
export const CREDENTIAL_VARIABLES: ReadonlySet<string> = new Set([
  'PIPELINE_API_KEY',
  'PIPELINE_REDIS_URL',
  'PIPELINE_CACHE_SIGNING_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
]);

/** The environment without the tool's credentials: what an expression's `env` reads. */
export function withoutCredentials(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && !CREDENTIAL_VARIABLES.has(name)) kept[name] = value;
  return kept;
}

/**
 * What a `run:` step's command sees of the environment when the recipe passes nothing more: what a
 * shell and the usual tools need to work (the search path, the home folder, the user, the locale,
 * the time zone, the temp folder, the terminal, `CI`), on POSIX and on Windows. Everything else is
 * the recipe's to pass by name with `settings.pass_env`: an allow-list, so that a secret added to
 * the environment later reaches no command by default.
 */
const ALWAYS_PASSED = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'CI',
  'SYSTEMROOT',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
];

/** `NAME` matches itself; `PREFIX_*` every name that starts with `PREFIX_`. */
const matches = (pattern: string, name: string) =>
  pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;

/**
 * A command's environment: the variables always passed, and those the recipe names in
 * `settings.pass_env` (names, or prefixes ending in `*`). A credential of the tool's is never
 * passed, whatever pattern names it.
 */
export function commandEnvironment(env: NodeJS.ProcessEnv, passEnv: readonly string[] = []): Record<string, string> {
  const patterns = [...ALWAYS_PASSED, ...passEnv];
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || CREDENTIAL_VARIABLES.has(name)) continue;
    if (patterns.some((pattern) => matches(pattern, name))) kept[name] = value;
  }
  return kept;
}
