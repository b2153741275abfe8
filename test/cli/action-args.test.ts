// The action's `args` input, split into words as a shell splits them (action/words.mjs, used by
// run.sh and setup.sh alike), then run by run.sh as the action runs it. An unclosed quote must
// refuse the run, not run it with half its arguments.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { repo } from '../support/action-checkout.js';

const workspace = mkdtempSync(join(tmpdir(), 'action-args-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));
writeFileSync(
  join(workspace, 'echo.yaml'),
  [
    'version: 1',
    'name: echo',
    'inputs:',
    '  title: { type: string, default: hello }',
    'steps:',
    '  say:',
    '    run: ["node", "-e", "process.stdout.write(process.argv[1])", "${{ inputs.title }}"]',
    '',
  ].join('\n'),
);

async function words(args: string) {
  const result = await execa('node', [join(repo, 'action', 'words.mjs'), args], { reject: false });
  return { words: result.stdout.split('\0').slice(0, -1), exitCode: result.exitCode, stderr: result.stderr };
}

async function runAction(args: string) {
  const outputFile = join(workspace, `output-${Math.random()}`);
  writeFileSync(outputFile, '');
  const summaryFile = join(workspace, `summary-${Math.random()}`);
  writeFileSync(summaryFile, '');
  const result = await execa('bash', [join(repo, 'action', 'run.sh')], {
    reject: false,
    env: {
      GITHUB_ACTIONS: 'true',
      GITHUB_ACTION_PATH: repo,
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      RUNNER_TEMP: workspace,
      INPUT_RECIPE: 'echo.yaml',
      INPUT_ARGS: args,
      INPUT_MAX_COST: '',
    },
  });
  const outputs = Object.fromEntries(
    readFileSync(outputFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return { ...result, outputs, summary: readFileSync(summaryFile, 'utf8') };
}

describe("the action's args", () => {
  it('are split as a shell splits words, with nothing expanded', async () => {
    const cases: [string, string[]][] = [
      ['', []],
      ['  \n ', []],
      ['--set app="Trail Mate" --out build/assets', ['--set', 'app=Trail Mate', '--out', 'build/assets']],
      [`--set who="Bob's"`, ['--set', "who=Bob's"]],
      [`--set q="say \\"hi\\""`, ['--set', 'q=say "hi"']],
      // Inside double quotes a backslash escapes only $ \` " \\ and a newline; outside, any character.
      [
        String.raw`--set p="a\b" --set r='a\b' --set s=a\\b --set t=a\b`,
        ['--set', 'p=a\\b', '--set', 'r=a\\b', '--set', 's=a\\b', '--set', 't=ab'],
      ],
      ['--set cost=$HOME ~ *.png #x', ['--set', 'cost=$HOME', '~', '*.png', '#x']],
      ["--set empty='' --local", ['--set', 'empty=', '--local']],
      ['--set a=1 \\\n  --local', ['--set', 'a=1', '--local']],
    ];
    for (const [args, expected] of cases) expect((await words(args)).words, args).toEqual(expected);
  });

  it('with an unclosed quote print no words and say where the quote is', async () => {
    const split = await words("--local\n--set who=Bob's --max-cost 1");
    expect(split.exitCode).toBe(2);
    expect(split.words).toEqual([]);
    expect(split.stderr).toContain(
      'args, line 2, column 14: the single quote in "who=Bob\'s --max-cost 1" is never closed',
    );
  });

  it('reach the run as the words they spell', async () => {
    const run = await runAction(String.raw`--set title="a \"q\" b\c" --local --no-report`);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.outputs.status).toBe('succeeded');
    const journal = readFileSync(join(workspace, '.pipeline', 'runs', run.outputs['run-id']!, 'journal.jsonl'), 'utf8');
    const finished = journal
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((event) => event.type === 'step-finished' && event.step === 'say');
    expect(finished.outputs.stdout).toBe('a "q" b\\c');
  });

  it('with an unclosed quote refuse the run: nothing runs, and the job page says why', async () => {
    const runs = () =>
      existsSync(join(workspace, '.pipeline', 'runs')) ? readdirSync(join(workspace, '.pipeline', 'runs')) : [];
    const before = runs();
    const run = await runAction("--set title=Bob's --local");
    expect(run.exitCode).toBe(2);
    expect(run.outputs.status).toBe('refused');
    expect(run.outputs['run-id']).toBe('');
    expect(run.stderr).toContain('column 16: the single quote');
    expect(run.stderr).toMatch(
      /^::error title=pipeline%3A not run::the action's args, line 1, column 16: the single quote in "title=Bob's --local"/m,
    );
    expect(runs()).toEqual(before);
    // The step's summary says so, as for every other run that is not run.
    expect(run.summary).toMatch(
      /^## ❌ echo\.yaml: not run \(exit 2\)\n\nthe action's args, line 1, column 16: the single quote/,
    );
  });
});
