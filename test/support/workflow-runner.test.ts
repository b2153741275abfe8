// The workflow runner the CI workflow test relies on: it must refuse what it cannot stand in for,
// skip steps after a failure unless `if: always()`, and save a cache only after a job that succeeded.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCondition, render, whenToRun } from './workflow-expressions.js';
import { type CacheStore, type JobSetup, runJob, type WorkflowJob } from './workflow-runner.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-workflow-runner-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

let jobs = 0;
function setup(cache: CacheStore): JobSetup {
  const checkout = (workspace: string) => {
    mkdirSync(join(workspace, 'recipes'), { recursive: true });
    writeFileSync(join(workspace, 'recipes', 'a.yaml'), 'version: 1\n');
  };
  return { root: join(work, `job-${jobs++}`), checkout, secrets: { KEY: 'k' }, cache, path: process.env.PATH! };
}
const CACHE_STEP = {
  uses: 'actions/cache@v4',
  with: { path: 'kept', key: "k-${{ hashFiles('recipes/*.yaml') }}", 'restore-keys': 'k-' },
};

const SAVE_ON_FAILURE = {
  name: 'save on failure',
  if: '${{ failure() }}',
  uses: 'actions/cache/save@v4',
  with: { path: 'kept', key: 'failed-${{ github.run_id }}' },
};

describe('the workflow runner', () => {
  it('renders the workspace, secrets and hashFiles, and refuses any other expression', () => {
    const scope = { workspace: work, secrets: { KEY: 'k' }, runId: '7' };
    expect(render('${{ github.workspace }}/x ${{ secrets.KEY }}', scope)).toBe(`${work}/x k`);
    expect(() => render('${{ github.sha }}', scope)).toThrow(/does not evaluate/);
    expect(() => render('${{ secrets.OTHER }}', scope)).toThrow(/does not set/);
    expect(() => render("${{ hashFiles('nothing/**') }}", scope)).toThrow(/matches no file/);
    expect(render('${{ github.run_id }}-${{ github.run_attempt }}', scope)).toBe('7-1');
    expect(whenToRun('${{ always() }}')).toBe('always');
    expect(whenToRun('failure()')).toBe('failure');
    expect(whenToRun(undefined)).toBe('success');
    expect(() => whenToRun('success() && true')).toThrow(/does not evaluate/);
    const inAction = { ...scope, inputs: { cache: 'true' }, steps: { a: { hit: 'true' } }, actionPath: '/act' };
    expect(readCondition("always() && inputs.cache == 'true'", inAction)).toEqual({ when: 'always', holds: true });
    expect(readCondition("steps.a.outputs.hit != 'true'", inAction)).toEqual({ when: 'success', holds: false });
    // A step that did not run has no outputs: ''.
    expect(readCondition("steps.b.outputs.x == ''", inAction).holds).toBe(true);
    expect(render('${{ github.action_path }}', inAction)).toBe('/act');
    expect(() => render('${{ inputs.other }}', inAction)).toThrow(/does not declare/);
    expect(() => readCondition("inputs.cache == 'true' || always()", inAction)).toThrow(/does not evaluate/);
  });

  it('after a failed step runs only `if: always()` steps, and saves no cache', async () => {
    const cache: CacheStore = { root: join(work, 'store-1'), entries: [] };
    const job: WorkflowJob = {
      steps: [
        { uses: 'actions/checkout@v4' },
        CACHE_STEP,
        { run: 'mkdir kept && echo "$GREETING ${{ secrets.KEY }}" > kept/a', env: { GREETING: 'hi' } },
        { name: 'fails', run: 'false\necho not reached' },
        { name: 'skipped', run: 'echo skipped' },
        { name: 'always', if: 'always()', run: 'echo "| t |" >> "$GITHUB_STEP_SUMMARY"' },
        SAVE_ON_FAILURE,
      ],
    };
    const result = await runJob(job, setup(cache));
    expect(result.steps.map((s) => [s.label, s.exitCode])).toEqual([
      ['actions/checkout@v4', 0],
      ['actions/cache@v4', 0],
      ['mkdir kept && echo "$GREETING ${{ secrets.KEY }}" > kept/a', 0],
      ['fails', 1],
      ['skipped', 'skipped'],
      ['always', 0],
      ['save on failure', 0],
    ]);
    expect(readFileSync(join(result.workspace, 'kept', 'a'), 'utf8')).toBe('hi k\n');
    expect(result.summary).toBe('| t |\n');
    // The job's cache step saved nothing after the failure; the failure() step did, under its own key.
    expect(cache.entries.map((e) => e.key)).toEqual([expect.stringMatching(/^failed-\d+$/)]);
  });

  it('saves the cache after a job that succeeded and restores it by key, else by prefix', async () => {
    const cache: CacheStore = { root: join(work, 'store-2'), entries: [] };
    const job: WorkflowJob = {
      steps: [
        { uses: 'actions/checkout@v4' },
        CACHE_STEP,
        { run: 'date >> kept/log || (mkdir kept && date > kept/log)' },
        SAVE_ON_FAILURE,
      ],
    };
    const first = await runJob(job, setup(cache));
    expect(first.cache).toBe('miss');
    expect(first.steps.at(-1)!.exitCode).toBe('skipped');
    expect(cache.entries.map((e) => e.key)).toEqual([expect.stringMatching(/^k-[0-9a-f]{64}$/)]);
    const second = await runJob(job, setup(cache));
    expect(second.cache).toBe('exact');
    expect(readFileSync(join(second.workspace, 'kept', 'log'), 'utf8').split('\n')).toHaveLength(3);
    expect(cache.entries).toHaveLength(1);
    const changed = setup(cache);
    const checkout = changed.checkout;
    changed.checkout = (workspace) => {
      checkout(workspace);
      writeFileSync(join(workspace, 'recipes', 'a.yaml'), 'version: 2\n');
    };
    const third = await runJob(job, changed);
    expect(third.cache).toBe('restored');
    expect(cache.entries).toHaveLength(2);
  });

  it('refuses an action, a key or an upload it cannot stand in for', async () => {
    const cache: CacheStore = { root: join(work, 'store-3'), entries: [] };
    const run = (steps: WorkflowJob['steps']) => runJob({ steps }, setup(cache));
    await expect(run([{ uses: 'actions/github-script@v7' }])).rejects.toThrow(/does not stand in for/);
    await expect(run([{ run: 'true', 'working-directory': 'x' } as never])).rejects.toThrow(/does not honour/);
    const upload = { uses: 'actions/upload-artifact@v4', with: { name: 'a', path: 'build/' } };
    await expect(run([{ uses: 'actions/checkout@v4' }, upload])).rejects.toThrow(/missing or empty/);
    expect(existsSync(join(work, 'store-3'))).toBe(false);
  });

  it('runs a local composite action: inputs and defaults, $GITHUB_ACTION_PATH, $GITHUB_OUTPUT, outputs', async () => {
    const cache: CacheStore = { root: join(work, 'store-4'), entries: [] };
    const action = [
      'name: greet',
      'inputs:',
      '  who: { required: true }',
      '  how: { default: hello }',
      'outputs:',
      '  said: { value: "${{ steps.say.outputs.line }}" }',
      '  where: { value: "${{ steps.say.outputs.where }}" }',
      'runs:',
      '  using: composite',
      '  steps:',
      '    - id: say',
      '      shell: bash',
      '      env: { WHO: "${{ inputs.who }}" }',
      '      run: |',
      '        echo "line=${{ inputs.how }} $WHO" >> "$GITHUB_OUTPUT"',
      '        { echo "where<<END"; echo "$GITHUB_ACTION_PATH"; echo "END"; } >> "$GITHUB_OUTPUT"',
      '        false',
      '    - name: after a failure',
      "      if: failure() && inputs.how == 'hello'",
      '      shell: bash',
      '      run: echo "cleaning up"',
      '',
    ].join('\n');
    const withAction = (text: string) => {
      const base = setup(cache);
      const checkout = base.checkout;
      base.checkout = (workspace) => {
        checkout(workspace);
        mkdirSync(join(workspace, 'greet'));
        writeFileSync(join(workspace, 'greet', 'action.yml'), text);
      };
      return base;
    };
    const job: WorkflowJob = {
      steps: [
        { uses: 'actions/checkout@v4' },
        { id: 'g', uses: './greet', with: { who: '${{ secrets.KEY }}' } },
        { name: 'report', if: 'always()', run: 'echo "${{ steps.g.outputs.said }} from ${{ steps.g.outputs.where }}"' },
      ],
    };
    const result = await runJob(job, withAction(action));
    expect(result.steps.map((s) => s.exitCode)).toEqual([0, 1, 0]);
    expect(result.steps[1]!.steps!.map((s) => [s.label, s.exitCode])).toEqual([
      [expect.stringContaining('echo "line='), 1],
      ['after a failure', 0],
    ]);
    expect(result.outputs.g).toEqual({ said: 'hello k', where: join(result.workspace, 'greet') });
    expect(result.steps[2]!.output).toBe(`hello k from ${join(result.workspace, 'greet')}`);
    // A required input missing, and a composite `run:` without its shell, are refused as GitHub refuses them.
    const bare = { steps: [{ uses: 'actions/checkout@v4' }, { uses: './greet', with: { who: 'w' } }] };
    await expect(runJob({ steps: [bare.steps[0]!, { uses: './greet' }] }, withAction(action))).rejects.toThrow(
      /needs the input who/,
    );
    await expect(runJob(bare, withAction(action.replace('      shell: bash\n', '')))).rejects.toThrow(
      /needs shell: bash/,
    );
  });
});
