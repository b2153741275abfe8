/**
 * What the workflow tests need to run this repository's GitHub Action offline: the files a
 * checkout of it holds, and stand-ins for `npm ci` (which cannot reach the registry here) and `npx`
 * (which the action must never use).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalGateway } from '../../src/local-gateway/index.js';

export const repo = fileURLToPath(new URL('../..', import.meta.url));

/** What the action's checkout needs: action.yml, its scripts, and what `npm ci` installs and builds from. */
export const ACTION_FILES = [
  'action.yml',
  'action',
  'src',
  'schemas',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

/** What a checkout holds of `paths`: git's list, or in a copy without git, the files minus .gitignore's. */
export function trackedFiles(paths: string[]): string[] {
  const listed = spawnSync('git', ['ls-files', '-z', ...paths], { cwd: repo, encoding: 'utf8' });
  if (listed.status === 0 && listed.stdout) return listed.stdout.split('\0').filter(Boolean);
  const onDisk = paths.flatMap((path) =>
    statSync(join(repo, path)).isDirectory()
      ? readdirSync(join(repo, path), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => relative(repo, join(e.parentPath, e.name)))
      : [path],
  );
  return onDisk.filter((file) => !/(^|\/)\.pipeline\/|\.log$/.test(file));
}

/** Copies the repository's tracked `files` into `dir`, as a checkout (or a download of the action) would. */
export function copyTracked(files: string[], dir: string): void {
  for (const file of files) cpSync(join(repo, file), join(dir, file), { recursive: true });
}

/**
 * A folder of stand-ins, first on the answered PATH: `npm ci` links the repository's node_modules
 * and its build (`npm run build`, run before the tests) into the folder it runs in, and notes the
 * folder in `log`; `npm prune --omit=dev` does nothing (it would prune the repository's own); `npx` fails, since outside a project that depends on this package `npx pipeline`
 * runs an unrelated registry package.
 */
export function toolShims(bin: string, log: string): string {
  mkdirSync(bin, { recursive: true });
  writeFileSync(log, '');
  const npm = [
    '#!/bin/sh',
    // The links below are the repository's own node_modules: a prune must leave them alone.
    '[ "$1" = prune ] && [ "$2" = --omit=dev ] && exit 0',
    '[ "$1" = ci ] || { echo "npm stand-in: only npm ci and npm prune --omit=dev are expected, got: $*" >&2; exit 127; }',
    `[ -f package-lock.json ] || { echo "npm ci: can only install with an existing package-lock.json" >&2; exit 1; }`,
    `ln -s "${join(repo, 'node_modules')}" node_modules && ln -s "${join(repo, 'dist')}" dist`,
    `pwd >> "${log}"`,
  ];
  const npx = ['#!/bin/sh', 'echo "npx stand-in: the action must not use npx, got: $*" >&2', 'exit 127'];
  writeFileSync(join(bin, 'npm'), `${npm.join('\n')}\n`);
  writeFileSync(join(bin, 'npx'), `${npx.join('\n')}\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
  return [bin, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
}

/** The folders `npm ci` ran in so far, one a line of the shims' log. */
export const npmCiRuns = (log: string) => readFileSync(log, 'utf8').split('\n').filter(Boolean);

/** Every file under `dir`, by path relative to it, with its bytes (base64). */
export function filesUnder(dir: string): Record<string, string> {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  const pairs = entries.map((e) => join(e.parentPath, e.name)).map((p) => [relative(dir, p), readFileSync(p)]);
  return Object.fromEntries(pairs.sort().map(([p, bytes]) => [p, bytes!.toString('base64')]));
}

/** The reads a run makes before it starts (the key and the balance): no work a cache could save. */
export const PREFLIGHT = ['GET /api/v1/apikey/validate', 'GET /api/v1/team/balance'];
export const SUBMIT = 'POST /api/v1/{provider}/{model_id}';

/** Runs `work` and answers it with the gateway requests it made by route (one preflight left out). */
export async function countingRequests<T>(gateway: LocalGateway, work: () => Promise<T>) {
  const before = gateway.stats().requests.by_route;
  const result = await work();
  await gateway.settle();
  const made: Record<string, number> = {};
  for (const [route, count] of Object.entries(gateway.stats().requests.by_route))
    if (count !== (before[route] ?? 0)) made[route] = count - (before[route] ?? 0);
  for (const route of PREFLIGHT) if (made[route] === 1) delete made[route];
  const total = Object.values(made).reduce((a, b) => a + b, 0);
  return { result, made, total };
}
