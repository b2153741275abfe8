/**
 * Runs one job of a GitHub Actions workflow on this machine, step by step, as the runner would:
 * `run:` steps through `bash -e` in the workspace with the job's and the step's env, and the few
 * actions the shipped workflow uses stood in for by what they do. An action or expression it does
 * not know fails the job, so the test cannot drift from the workflow's text.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { type ExpressionScope, render, renderAll, whenToRun } from './workflow-expressions.js';

export interface WorkflowStep {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  if?: string;
}
export interface WorkflowJob {
  env?: Record<string, unknown>;
  steps: WorkflowStep[];
}

/** What actions/cache keeps between jobs: saved folders by key, oldest first. */
export interface CacheStore {
  root: string;
  entries: Array<{ key: string; dir: string }>;
}

export interface JobSetup {
  /** A new folder for this job: the workspace, the home folder and the step summaries go in it. */
  root: string;
  /** What actions/checkout puts into the workspace. */
  checkout: (workspace: string) => void;
  secrets: Record<string, string>;
  cache: CacheStore;
  /** PATH for the steps (a fresh machine's, plus whatever stands in for `npm ci`). */
  path: string;
}

export interface StepRecord {
  label: string;
  /** The exit code of a `run:` step, 0 for an action that did its work, or skipped. */
  exitCode: number | 'skipped';
  output: string;
}
export interface JobResult {
  workspace: string;
  steps: StepRecord[];
  artifacts: Record<string, string>;
  /** The job's summary: what every step appended to its GITHUB_STEP_SUMMARY. */
  summary: string;
  cache: 'exact' | 'restored' | 'miss';
}

/** The keys this runner honours; any other (shell, working-directory, strategy…) would be ignored silently. */
const JOB_KEYS = ['runs-on', 'env', 'steps'];
const STEP_KEYS = ['name', 'uses', 'run', 'with', 'env', 'if'];
function checkKeys(what: string, value: object, known: string[]) {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new Error(`${what} has ${unknown.join(', ')}, which the test's runner does not honour`);
}

const labelOf = (step: WorkflowStep) => step.name ?? step.uses ?? step.run ?? '?';
const actionOf = (uses: string) => uses.replace(/@.*$/, '');

let runs = 0;

export async function runJob(job: WorkflowJob, setup: JobSetup): Promise<JobResult> {
  const workspace = join(setup.root, 'workspace');
  const home = join(setup.root, 'home');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(home, { recursive: true });
  const scope: ExpressionScope = { workspace, secrets: setup.secrets, runId: String(++runs) };
  const base = {
    PATH: setup.path,
    HOME: home,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    ...renderAll(job.env, scope),
  };
  const result: JobResult = { workspace, steps: [], artifacts: {}, summary: '', cache: 'miss' };
  const posts: Array<() => void> = [];
  let failed = false;
  checkKeys('the job', job, JOB_KEYS);
  for (const [index, step] of job.steps.entries()) {
    const label = labelOf(step);
    checkKeys(`step ${label}`, step, STEP_KEYS);
    // Evaluated on every step, so that an `if` the runner cannot read fails a green job too.
    const when = whenToRun(step.if);
    if (when !== 'always' && failed !== (when === 'failure')) {
      result.steps.push({ label, exitCode: 'skipped', output: '' });
      continue;
    }
    const summaryFile = join(setup.root, `summary-${index}.md`);
    writeFileSync(summaryFile, '');
    const env = { ...base, GITHUB_STEP_SUMMARY: summaryFile, ...renderAll(step.env, scope) };
    const record = step.run
      ? await runCommand(render(step.run, scope), env, workspace, join(setup.root, `step-${index}.sh`))
      : { exitCode: 0, output: useAction(step, scope, setup, result, posts) };
    result.steps.push({ label, ...record });
    result.summary += readFileSync(summaryFile, 'utf8');
    if (record.exitCode !== 0) failed = true;
  }
  // Post steps run in reverse order; actions/cache saves only after a job that succeeded.
  if (!failed) for (const post of posts.reverse()) post();
  return result;
}

async function runCommand(script: string, env: Record<string, string>, cwd: string, file: string) {
  // `npm ci` cannot run offline: the checkout gets the repository's node_modules instead (JobSetup).
  if (script.trim() === 'npm ci') return { exitCode: 0, output: 'npm ci: stood in for by the test' };
  writeFileSync(file, script);
  const done = await execa('bash', ['-e', file], { cwd, env, extendEnv: false, reject: false, all: true });
  return { exitCode: done.exitCode ?? 1, output: done.all ?? '' };
}

/** What each action does; answers its log line. */
function useAction(
  step: WorkflowStep,
  scope: ExpressionScope,
  setup: JobSetup,
  job: JobResult,
  posts: Array<() => void>,
) {
  const uses = actionOf(step.uses ?? '');
  const inputs = renderAll(step.with, scope);
  if (uses === 'actions/checkout') {
    setup.checkout(scope.workspace);
    return 'checked out';
  }
  if (uses === 'actions/setup-node') {
    // Its npm cache is keyed by the lockfile, and it fails when the checkout has none.
    if (inputs.cache === 'npm' && !existsSync(join(scope.workspace, 'package-lock.json')))
      throw new Error('setup-node with cache: npm needs package-lock.json in the checkout');
    return `node ${process.version} (the test's own)`;
  }
  if (uses === 'actions/cache') return restoreCache(inputs, scope.workspace, setup.cache, job, posts);
  if (uses === 'actions/cache/save') return saveCache(inputs, scope.workspace, setup.cache);
  if (uses === 'actions/upload-artifact') {
    const path = resolve(scope.workspace, inputs.path ?? '');
    if (!existsSync(path) || readdirSync(path).length === 0)
      throw new Error(`upload-artifact: ${inputs.path} is missing or empty`);
    job.artifacts[inputs.name ?? 'artifact'] = path;
    return `uploaded ${inputs.path}`;
  }
  throw new Error(`the workflow uses ${step.uses}, which the test's runner does not stand in for`);
}

/** actions/cache: the exact key, else the newest entry under the first restore key that has one. */
function restoreCache(
  inputs: Record<string, string>,
  workspace: string,
  store: CacheStore,
  job: JobResult,
  posts: Array<() => void>,
) {
  const key = inputs.key!;
  const prefixes = (inputs['restore-keys'] ?? '').split('\n').map((p) => p.trim());
  const exact = store.entries.find((e) => e.key === key);
  const newest = (prefix: string) => store.entries.filter((e) => e.key.startsWith(prefix)).at(-1);
  const found = exact ?? prefixes.filter(Boolean).map(newest).find(Boolean);
  const target = join(workspace, inputs.path!);
  if (found) cpSync(found.dir, target, { recursive: true });
  job.cache = exact ? 'exact' : found ? 'restored' : 'miss';
  posts.push(() => {
    if (!exact) saveCache(inputs, workspace, store);
  });
  return `cache ${job.cache} for ${key}`;
}

/** Saves `path` under `key`; a key already saved stays as it was (GitHub's caches cannot be overwritten). */
function saveCache(inputs: Record<string, string>, workspace: string, store: CacheStore) {
  const key = inputs.key!;
  if (store.entries.some((e) => e.key === key)) return `cache ${key} exists: not saved`;
  const target = join(workspace, inputs.path!);
  // As GitHub's: a warning, not a failure (the cold job's test sees the missing save).
  if (!existsSync(target)) return `warning: ${inputs.path} does not exist, hence no cache is being saved`;
  const dir = join(store.root, String(store.entries.length));
  cpSync(target, dir, { recursive: true });
  store.entries.push({ key, dir });
  return `cache saved as ${key}`;
}
