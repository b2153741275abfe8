import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandName } from '../../src/cli/invocation.js';

let root: string;
let program: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pipeline-invocation-'));
  program = join(root, 'package', 'dist', 'cli', 'main.js');
  await mkdir(join(root, 'package', 'dist', 'cli'), { recursive: true });
  await writeFile(program, '');
  for (const bin of ['global-bin', join('project', 'node_modules', '.bin')]) {
    await mkdir(join(root, bin), { recursive: true });
    await symlink(program, join(root, bin, 'pipeline'));
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('commandName: how the user runs the tool again', () => {
  it('names pipeline when that name on PATH is this program', () => {
    expect(commandName(join(root, 'global-bin', 'pipeline'), join(root, 'global-bin'))).toBe('pipeline');
  });

  it("says npx media-pipeline when only a project's node_modules/.bin has it: npx put it on PATH, the user's shell does not", () => {
    const npxPath = [join(root, 'project', 'node_modules', '.bin'), '/usr/bin'].join(delimiter);
    expect(commandName(join(root, 'project', 'node_modules', '.bin', 'pipeline'), npxPath)).toBe('npx media-pipeline');
  });
});
