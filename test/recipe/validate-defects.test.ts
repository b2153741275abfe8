import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
        // The error is in what the command line gave, not in the recipe.
        '1 error in the command line',
      ].join('\n'),
    );
  });
});

describe('pipeline validate on items written out in the recipe', () => {
  it('refuses a field no item has, and takes one that only some items have', async () => {
    const path = join(dir, 'items.yaml');
    const recipe = (read: string) =>
      `version: 1\nname: items\nsteps:\n  a:\n    for_each: [{ p: red }, { p: blue, q: sky }]\n    run: echo \${{ ${read} }}\n`;
    await writeFile(path, recipe('item.r'));
    const refused = await validate([path]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`${path}:6:15: error: item has no field 'r'; did you mean 'p'? It has p, q`);
    // q is in the second item only: the first reads it as null, which is no mistake.
    await writeFile(path, recipe('item.q'));
    expect((await validate([path])).exitCode).toBe(0);
  });
});

describe('pipeline validate on a spreadsheet as users export it', () => {
  it('says a folder is no file, a header split on ; is not split on commas, and which words a boolean takes', async () => {
    await mkdir(join(dir, 'photos'), { recursive: true });
    const recipe = join(dir, 'sheet.yaml');
    await writeFile(
      recipe,
      'version: 1\nname: sheet\ninputs:\n  photo: { type: file }\n  video: { type: boolean, default: false }\nsteps:\n  badge:\n    uses: vendor-b/vendor-b-5.0-lite-edit\n    with: { prompt: a badge, image: ["${{ inputs.photo }}"] }\n',
    );
    const folder = join(dir, 'folder.csv');
    await writeFile(folder, 'photo,video\nphotos,no\n');
    const one = await validate([recipe, '--batch', folder]);
    expect(one.stderr).toContain('photos is a folder, not a file (');
    const maybe = join(dir, 'maybe.csv');
    await writeFile(maybe, `photo,video\n${recipe},maybe\n`);
    expect((await validate([recipe, '--batch', maybe])).stderr).toContain(
      'input \'video\' must be true or false (or yes/no, 1/0), got "maybe"',
    );
    const semicolons = join(dir, 'semicolons.csv');
    await writeFile(semicolons, 'photo;video\nphotos;no\n');
    const two = await validate([recipe, '--batch', semicolons]);
    expect(two.stderr).toContain(
      "unknown input 'photo;video' in the batch file's header; the header has no comma but ';': a batch file's columns are separated by commas",
    );
  });
});
