/**
 * Runs one job of a GitHub Actions workflow on this machine, step by step, as the runner would:
 * `run:` steps through `bash -e` in the workspace with the job's and the step's env (and
 * $GITHUB_OUTPUT read back as the step's outputs), composite actions (local ones, `uses: ./`, and
 * those JobSetup.actions provides) step by step with their inputs, outputs and
 * $GITHUB_ACTION_PATH, and the few actions of actions/* they use stood in for by what they do. An action or expression it does
 * not know fails the job, so the test cannot drift from the workflow's text.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { type ExpressionScope, readCondition, render, renderAll } from './workflow-expressions.js';

export interface WorkflowStep {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  if?: string;
}
export interface WorkflowJob {
  env?: Record<string, unknown>;
  steps: WorkflowStep[];
}

/** A composite action's action.yml, as far as this runner honours it. */
interface CompositeAction {
  inputs?: Record<string, { required?: boolean; default?: unknown }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: WorkflowStep[] };
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
  /** The repository's variables, `vars.NAME`. */
  vars?: Record<string, string>;
  cache: CacheStore;
  /** PATH for the steps (a fresh machine's, plus whatever stands in for `npm ci`). */
  path: string;
  /**
   * Actions of other repositories (`owner/name`, without the ref): each puts that repository's
   * files into the folder the runner downloads the action to. A local action (`uses: ./path`)
   * is read from the workspace.
   */
  actions?: Record<string, (dir: string) => void>;
}

export interface StepRecord {
  label: string;
  /** The exit code of a `run:` step, 0 for an action that did its work (1 for a composite one whose step failed), or skipped. */
  exitCode: number | 'skipped';
  output: string;
  /** A composite action's own steps. */
  steps?: StepRecord[];
}
export interface JobResult {
  workspace: string;
  steps: StepRecord[];
  /** Each uploaded artifact's name, and the paths it was given. */
  artifacts: Record<string, string[]>;
  /** The job's summary: what every step appended to its GITHUB_STEP_SUMMARY. */
  summary: string;
  /** The outcome of the last cache restore. */
  cache: 'exact' | 'restored' | 'miss';
  /** Every cache restore of the job, in order. */
  restores: Array<{ key: string; outcome: 'exact' | 'restored' | 'miss' }>;
  /** `steps.ID.outputs` of the job's steps that have an id. */
  outputs: Record<string, Record<string, string>>;
}

/** The keys this runner honours; any other (strategy, working-directory…) would be ignored silently. */
const JOB_KEYS = ['runs-on', 'env', 'steps'];
const STEP_KEYS = ['id', 'name', 'uses', 'run', 'shell', 'with', 'env', 'if'];
function checkKeys(what: string, value: object, known: string[]) {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new Error(`${what} has ${unknown.join(', ')}, which the test's runner does not honour`);
}

const labelOf = (step: WorkflowStep) => step.name ?? step.uses ?? step.run ?? '?';
const actionOf = (uses: string) => uses.replace(/@.*$/, '');

let runs = 0;

/** What the steps of one list (the job's, or a composite action's) share while they run. */
interface StepContext {
  setup: JobSetup;
  job: JobResult;
  scope: ExpressionScope;
  env: Record<string, string>;
  posts: Array<() => void>;
  /** Where this list's step files go (summary, output, script). */
  prefix: string;
  /** True inside a composite action, where every `run:` must name its shell. */
  composite: boolean;
}

export async function runJob(job: WorkflowJob, setup: JobSetup): Promise<JobResult> {
  const workspace = join(setup.root, 'workspace');
  const home = join(setup.root, 'home');
  const temp = join(setup.root, 'runner-temp');
  for (const dir of [workspace, home, temp]) mkdirSync(dir, { recursive: true });
  const result: JobResult = {
    workspace,
    steps: [],
    artifacts: {},
    summary: '',
    cache: 'miss',
    restores: [],
    outputs: {},
  };
  const scope: ExpressionScope = {
    workspace,
    secrets: setup.secrets,
    ...(setup.vars ? { vars: setup.vars } : {}),
    runId: String(++runs),
    steps: result.outputs,
  };
  const env = {
    PATH: setup.path,
    HOME: home,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: temp,
    RUNNER_OS: 'Linux',
    ...renderAll(job.env, scope),
  };
  checkKeys('the job', job, JOB_KEYS);
  const context: StepContext = { setup, job: result, scope, env, posts: [], prefix: 'job', composite: false };
  const { records, failed } = await runSteps(job.steps, context);
  result.steps = records;
  // Post steps run in reverse order; actions/cache saves only after a job that succeeded.
  if (!failed) for (const post of context.posts.reverse()) post();
  return result;
}

/** Runs `steps` in order, as GitHub does: after a failure only `always()` and `failure()` steps. */
async function runSteps(steps: WorkflowStep[], context: StepContext) {
  const { setup, scope, job } = context;
  const records: StepRecord[] = [];
  let failed = false;
  for (const [index, step] of steps.entries()) {
    const label = labelOf(step);
    checkKeys(`step ${label}`, step, STEP_KEYS);
    if (step.run && context.composite && step.shell !== 'bash')
      throw new Error(`step ${label} of a composite action needs shell: bash (GitHub refuses it without a shell)`);
    if (step.shell !== undefined && step.shell !== 'bash')
      throw new Error(`step ${label} has shell: ${step.shell}, which the test's runner does not honour`);
    // Evaluated on every step, so that an `if` the runner cannot read fails a green job too.
    const condition = readCondition(step.if, scope);
    const statusAllows = condition.when === 'always' || failed === (condition.when === 'failure');
    if (!statusAllows || !condition.holds) {
      records.push({ label, exitCode: 'skipped', output: '' });
      continue;
    }
    const files = join(setup.root, `${context.prefix}-${index}`);
    const summaryFile = `${files}-summary.md`;
    const outputFile = `${files}-output.txt`;
    writeFileSync(summaryFile, '');
    writeFileSync(outputFile, '');
    const env = {
      ...context.env,
      GITHUB_STEP_SUMMARY: summaryFile,
      GITHUB_OUTPUT: outputFile,
      ...renderAll(step.env, scope),
    };
    let record: Omit<StepRecord, 'label'>;
    let outputs: Record<string, string> = {};
    if (step.run) {
      record = await runCommand(render(step.run, scope), env, scope.workspace, `${files}.sh`);
      outputs = readOutputs(outputFile);
    } else if (isComposite(step.uses ?? '')) {
      const ran = await runComposite(step, env, context, `${context.prefix}-${index}`);
      record = ran.record;
      outputs = ran.outputs;
    } else {
      const done = useAction(step, scope, setup, job, context.posts);
      record = { exitCode: 0, output: done.output };
      outputs = done.outputs;
    }
    records.push({ label, ...record });
    if (step.id) scope.steps![step.id] = outputs;
    job.summary += readFileSync(summaryFile, 'utf8');
    if (record.exitCode !== 0) failed = true;
  }
  return { records, failed };
}

async function runCommand(script: string, env: Record<string, string>, cwd: string, file: string) {
  writeFileSync(file, script);
  const done = await execa('bash', ['-e', file], { cwd, env, extendEnv: false, reject: false, all: true });
  return { exitCode: done.exitCode ?? 1, output: done.all ?? '' };
}

/** `name=value` lines and `name<<DELIMITER` … `DELIMITER` blocks, as a step writes them to $GITHUB_OUTPUT. */
export function readOutputs(file: string): Record<string, string> {
  const lines = readFileSync(file, 'utf8').split('\n');
  const outputs: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const block = /^([^=<]+)<<(.+)$/.exec(line);
    if (block) {
      const end = lines.indexOf(block[2]!, i + 1);
      if (end < 0) throw new Error(`GITHUB_OUTPUT: ${block[1]} has no closing ${block[2]}`);
      outputs[block[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
      continue;
    }
    const pair = /^([^=]+)=(.*)$/.exec(line);
    if (!pair) throw new Error(`GITHUB_OUTPUT: cannot read line ${JSON.stringify(line)}`);
    outputs[pair[1]!] = pair[2]!;
  }
  return outputs;
}

/** A local action (`./…`) or one of JobSetup.actions: this runner runs those as composite actions. */
const isComposite = (uses: string) =>
  uses.startsWith('./') || (uses.split('/').length === 2 && !uses.startsWith('actions/'));

/**
 * A composite action as GitHub runs one: its inputs from `with` (else their defaults), its own steps
 * with $GITHUB_ACTION_PATH and the calling step's env, then its outputs rendered from its steps'.
 */
async function runComposite(step: WorkflowStep, env: Record<string, string>, context: StepContext, prefix: string) {
  const uses = step.uses!;
  const { setup, scope } = context;
  let actionPath: string;
  if (uses.startsWith('./')) actionPath = resolve(scope.workspace, uses);
  else {
    const fill = setup.actions?.[actionOf(uses)];
    if (!fill) throw new Error(`the workflow uses ${uses}, which the test's runner does not stand in for`);
    actionPath = join(setup.root, '_actions', actionOf(uses));
    mkdirSync(actionPath, { recursive: true });
    fill(actionPath);
  }
  const file = ['action.yml', 'action.yaml'].map((f) => join(actionPath, f)).find(existsSync);
  if (!file) throw new Error(`${uses}: no action.yml in ${actionPath}`);
  const action = parse(readFileSync(file, 'utf8')) as CompositeAction;
  checkKeys(`the action ${uses}`, action, ['name', 'description', 'author', 'branding', 'inputs', 'outputs', 'runs']);
  if (action.runs.using !== 'composite')
    throw new Error(`${uses} is a ${action.runs.using} action, not a composite one`);
  const given = renderAll(step.with, scope);
  const declared = action.inputs ?? {};
  for (const name of Object.keys(given)) if (!(name in declared)) throw new Error(`${uses} has no input ${name}`);
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(declared)) {
    const value = given[name] ?? (spec.default === undefined ? undefined : String(spec.default));
    if (value === undefined && spec.required) throw new Error(`${uses} needs the input ${name}`);
    inputs[name] = value ?? '';
  }
  const inner: ExpressionScope = { ...scope, inputs, actionPath, steps: {} };
  const actionEnv = { ...env, GITHUB_ACTION_PATH: actionPath };
  const nested = { ...context, scope: inner, env: actionEnv, prefix, composite: true };
  const { records, failed } = await runSteps(action.runs.steps, nested);
  const outputs = Object.fromEntries(
    Object.entries(action.outputs ?? {}).map(([name, spec]) => [name, render(spec.value, inner)]),
  );
  const output = records.map((r) => `## ${r.label} (${r.exitCode})\n${r.output}`).join('\n');
  return { record: { exitCode: failed ? 1 : 0, output, steps: records }, outputs };
}

/** What each action does; answers its log line and its outputs. */
function useAction(
  step: WorkflowStep,
  scope: ExpressionScope,
  setup: JobSetup,
  job: JobResult,
  posts: Array<() => void>,
): { output: string; outputs: Record<string, string> } {
  const uses = actionOf(step.uses ?? '');
  const inputs = renderAll(step.with, scope);
  const done = (output: string, outputs: Record<string, string> = {}) => ({ output, outputs });
  if (uses === 'actions/checkout') {
    setup.checkout(scope.workspace);
    return done('checked out');
  }
  if (uses === 'actions/setup-node') {
    // Its npm cache is keyed by the lockfile, and it fails when the checkout has none.
    if (inputs.cache === 'npm' && !existsSync(join(scope.workspace, 'package-lock.json')))
      throw new Error('setup-node with cache: npm needs package-lock.json in the checkout');
    return done(`node ${process.version} (the test's own)`);
  }
  if (uses === 'actions/cache' || uses === 'actions/cache/restore') {
    const outcome = restoreCache(inputs, scope.workspace, setup.cache, job);
    // actions/cache saves in its post step; actions/cache/restore leaves saving to the workflow.
    if (uses === 'actions/cache')
      posts.push(() => {
        if (outcome !== 'exact') saveCache(inputs, scope.workspace, setup.cache);
      });
    return done(`cache ${outcome} for ${inputs.key}`, { 'cache-hit': String(outcome === 'exact') });
  }
  if (uses === 'actions/cache/save') return done(saveCache(inputs, scope.workspace, setup.cache));
  if (uses === 'actions/upload-artifact') {
    const name = inputs.name ?? 'artifact';
    // Artifacts of v4 cannot be overwritten: a second upload under one name fails the step.
    if (job.artifacts[name]) throw new Error(`upload-artifact: an artifact named ${name} exists in this job`);
    const paths = pathsOf(inputs.path ?? '', scope.workspace);
    for (const path of paths)
      if (!existsSync(path) || (statSync(path).isDirectory() && readdirSync(path).length === 0))
        throw new Error(`upload-artifact: ${path} is missing or empty`);
    job.artifacts[name] = paths;
    return done(`uploaded ${paths.join(', ')} as ${name}`);
  }
  throw new Error(`the workflow uses ${step.uses}, which the test's runner does not stand in for`);
}

/** A `path` input: one path a line, relative to the workspace. */
const pathsOf = (input: string, workspace: string) =>
  input
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => resolve(workspace, line));

/** actions/cache: the exact key, else the newest entry under the first restore key that has one. */
function restoreCache(inputs: Record<string, string>, workspace: string, store: CacheStore, job: JobResult) {
  const key = inputs.key!;
  const prefixes = (inputs['restore-keys'] ?? '').split('\n').map((p) => p.trim());
  const exact = store.entries.find((e) => e.key === key);
  const newest = (prefix: string) => store.entries.filter((e) => e.key.startsWith(prefix)).at(-1);
  const found = exact ?? prefixes.filter(Boolean).map(newest).find(Boolean);
  if (found)
    for (const [n, path] of pathsOf(inputs.path!, workspace).entries())
      if (existsSync(join(found.dir, String(n)))) cpSync(join(found.dir, String(n)), path, { recursive: true });
  const outcome = exact ? 'exact' : found ? 'restored' : 'miss';
  job.cache = outcome;
  job.restores.push({ key, outcome });
  return outcome;
}

/** Saves each of `path`'s lines under `key`; a key already saved stays as it was (GitHub's caches cannot be overwritten). */
function saveCache(inputs: Record<string, string>, workspace: string, store: CacheStore) {
  const key = inputs.key!;
  if (store.entries.some((e) => e.key === key)) return `cache ${key} exists: not saved`;
  const paths = pathsOf(inputs.path!, workspace);
  // As GitHub's: a warning, not a failure (the cold job's test sees the missing save).
  if (!paths.some((path) => existsSync(path)))
    return `warning: ${inputs.path} does not exist, hence no cache is being saved`;
  const dir = join(store.root, String(store.entries.length));
  for (const [n, path] of paths.entries())
    if (existsSync(path)) cpSync(path, join(dir, String(n)), { recursive: true });
  store.entries.push({ key, dir });
  return `cache saved as ${key}`;
}
