import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
let home: string;
let dir: string;
const validate = (args: string[]) =>
  execa('node', [cli, 'validate', ...args], { reject: false, env: { PIPELINE_HOME: home } });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-home-'));
  dir = await mkdtemp(join(tmpdir(), 'recipes-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

// These used to crash with a TypeError and exit 1; they are the user's mistakes, located, exit 2.
describe('pipeline validate on inputs that once crashed it', () => {
  it.each([
    [
      'a step with no value',
      'steps:\n  a:\n',
      '4:5: error: steps.a must be a mapping, got nothing',
      '4 |   a:',
      '  |     ~',
    ],
    [
      'a step that is a number',
      'steps:\n  a: 5\n',
      '4:6: error: steps.a must be a mapping, got 5',
      '4 |   a: 5',
      '  |      ~',
    ],
  ])('%s is a located diagnostic', async (_name, steps, first, line, marker) => {
    const path = join(dir, 'step.yaml');
    await writeFile(path, `version: 1\nname: broken\n${steps}`);
    const result = await validate([path]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe([`${path}:${first}`, '  |', line, marker, '', `1 error in ${path}`].join('\n'));
  });

  it('--set __proto__=1 is an unknown input, pointed at on the command line', async () => {
    const path = join(dir, 'inputs.yaml');
    await writeFile(
      path,
      'version: 1\nname: inputs\ninputs:\n  topic: { type: string, default: bikes }\nsteps:\n  a: { run: echo }\n',
    );
    const result = await validate([path, '--set', '__proto__=1']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      [
        "command line:1:7: error: unknown input '__proto__'; the inputs are topic",
        '  |',
        '1 | --set __proto__=1',
        '  |       ~~~~~~~~~',
        '',
        `1 error in ${path}`,
      ].join('\n'),
    );
  });
});
