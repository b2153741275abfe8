import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, pipelineProcess } from '../support/cli.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pipeline-invocation-'));
  for (const bin of ['global-bin', join('project', 'node_modules', '.bin')]) {
    await mkdir(join(root, bin), { recursive: true });
    await symlink(builtCli, join(root, bin, 'pipeline'));
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** `init`'s next steps, from the bin at `bin` with `path` as PATH: they name the command to run again. */
async function nextSteps(bin: string, path: string): Promise<string> {
  const project = await mkdtemp(join(root, 'init-'));
  const init = await pipelineProcess(['init', '--dir', project], {
    bin,
    env: { PATH: [path, process.env.PATH].join(delimiter), HOME: root },
  });
  expect(init.exitCode, init.stderr).toBe(0);
  return init.stdout;
}

describe('how the tool names itself for the user to run again', () => {
  it('pipeline, when that name on PATH is this program (installed globally or linked)', async () => {
    const bin = join(root, 'global-bin');
    expect(await nextSteps(join(bin, 'pipeline'), bin)).toContain('\n  pipeline validate recipes/assets.yaml');
  });

  it("npx media-pipeline, when only a project's node_modules/.bin has it: npx put that on PATH, the user's shell does not", async () => {
    const bin = join(root, 'project', 'node_modules', '.bin');
    expect(await nextSteps(join(bin, 'pipeline'), bin)).toContain(
      '\n  npx media-pipeline validate recipes/assets.yaml',
    );
  });
});
