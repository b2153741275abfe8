import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

/** The commands' time, and the built-in gateway's that --local starts: waits take no real time. */
const clock = new ManualClock();
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-shell-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

const pipeline = (args: string[]) =>
  pipelineInProcess(args, {
    cwd: work,
    clock,
    env: { ...process.env, PIPELINE_HOME: join(work, 'home'), PIPELINE_LOCAL_LATENCY_SCALE: '0.02', CI: 'true' },
  });

/** Each value reaches a text command from an input, and from an earlier step's output. */
const RECIPE = `version: 1
name: shell-values
inputs:
  title: { type: string }
steps:
  source:
    run: ["node", "-e", "process.stdout.write(JSON.stringify({ value: process.argv[1] }))", "\${{ inputs.title }}"]
  quoted:
    run: printf '%s' "\${{ inputs.title }}"
  from-step:
    run: printf '%s' "\${{ steps.source.outputs.json.value }}"
  in-substitution:
    run: printf '%s' "$(printf '%s' "\${{ inputs.title }}")"
  unquoted:
    run: printf '[%s]' \${{ inputs.title }}
outputs:
  quoted: \${{ steps.quoted.outputs.stdout }}
  from_step: \${{ steps.from-step.outputs.stdout }}
  in_substitution: \${{ steps.in-substitution.outputs.stdout }}
  unquoted: \${{ steps.unquoted.outputs.stdout }}
`;

const HOSTILE = [
  '$(touch pwned)',
  '`touch pwned`',
  '"; touch pwned; #',
  "'",
  'it\'s "quoted" \\ and $HOME and ${HOME} and *',
  'one\ntwo; touch pwned\n  three',
  '; touch pwned',
];

describe('a text run: with values from inputs and from earlier steps', () => {
  it('never runs a value as shell code, and passes it byte for byte in double quotes', async () => {
    const recipe = join(work, 'shell-values.yaml');
    await writeFile(recipe, RECIPE);
    const rows = join(work, 'rows.jsonl');
    await writeFile(rows, `${HOSTILE.map((title) => JSON.stringify({ title })).join('\n')}\n`);
    const result = await pipeline(['run', recipe, '--local', '--batch', rows, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    for (const [row, title] of HOSTILE.entries()) {
      expect(report.outputs[row]).toMatchObject({ quoted: title, from_step: title, in_substitution: title });
    }
    expect(existsSync(join(report.run_dir, 'pwned'))).toBe(false);
    expect(existsSync(join(work, 'pwned'))).toBe(false);
    expect(await readdir(report.run_dir)).not.toContain('pwned');
  });

  it('keeps normal values working in double quotes and unquoted (split into words, as any variable)', async () => {
    const recipe = join(work, 'shell-values.yaml');
    await writeFile(recipe, RECIPE);
    const result = await pipeline(['run', recipe, '--local', '--set', 'title=Spring sale', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).outputs).toEqual({
      quoted: 'Spring sale',
      from_step: 'Spring sale',
      in_substitution: 'Spring sale',
      unquoted: '[Spring][sale]',
    });
  });

  it('caches a text command by its values, not only by its text', async () => {
    const recipe = join(work, 'cached.yaml');
    await writeFile(
      recipe,
      `version: 1\nname: cached\ninputs:\n  title: { type: string }\nsteps:\n` +
        '  echo:\n    run: echo "${{ inputs.title }}" "$$"\n    cache: true\n' +
        'outputs:\n  said: ${{ steps.echo.outputs.stdout }}\n',
    );
    const said = async (title: string) => {
      const result = await pipeline(['run', recipe, '--local', '--set', `title=${title}`, '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      return { said: JSON.parse(result.stdout).outputs.said as string, cached: /⚡ echo cached/.test(result.stderr) };
    };
    const first = await said('one');
    expect(first).toMatchObject({ said: expect.stringMatching(/^one \d+$/), cached: false });
    expect(await said('one')).toEqual({ said: first.said, cached: true });
    expect(await said('two')).toMatchObject({ said: expect.stringMatching(/^two \d+$/), cached: false });
    // pipeline plan finds the same keys: the run for 'one' is cached, a run for 'three' is not.
    const planned = async (title: string) => {
      const result = await pipeline(['plan', recipe, '--set', `title=${title}`, '--format', 'json']);
      expect(result.exitCode, result.stderr).toBe(0);
      return JSON.parse(result.stdout).totals.cached;
    };
    expect(await planned('one')).toBe(1);
    expect(await planned('three')).toBe(0);
  });
});

describe('pipeline validate on a text run: whose expression the shell would not expand', () => {
  it('reports an expression inside single quotes at its place, and runs nothing', async () => {
    const recipe = join(work, 'single.yaml');
    await writeFile(
      recipe,
      `version: 1\nname: single\ninputs:\n  title: { type: string, default: x }\nsteps:\n` +
        '  fine:\n    run: echo "${{ inputs.title }}"\n  say:\n    run: echo \'title ${{ inputs.title }}\'\n',
    );
    for (const command of ['validate', 'run']) {
      const result = await pipeline([command, recipe, ...(command === 'run' ? ['--local'] : [])]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(
        `${recipe}:9:22: error: \${{ inputs.title }} is inside single quotes, where the shell expands nothing: ` +
          'its value would not reach the command. A text run: passes each value as an environment variable; ' +
          'put the expression in double quotes ("${{ inputs.title }}"), or use the list form',
      );
      expect(result.stderr).toContain(
        "9 |     run: echo 'title ${{ inputs.title }}'\n  |                      ~~~~~~~~~~~~~~~~~~~",
      );
      expect(result.stderr.match(/error:/g)).toHaveLength(1);
    }
  });
});
