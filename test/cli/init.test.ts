import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const BASH_COMPLETION = '/usr/share/bash-completion/bash_completion';

let project: string;
beforeEach(async () => {
  project = await mkdtemp(join(tmpdir(), 'pipeline-init-'));
});
afterEach(() => rm(project, { recursive: true, force: true }));

const pipeline = (args: string[]) =>
  execa('node', [cli, ...args], {
    reject: false,
    cwd: project,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? '', PIPELINE_HOME: join(project, '.pipeline') },
  });

describe('pipeline init', () => {
  it('writes a starter recipe that runs as it is, a workflow that uses the action, and .pipeline/ ignored', async () => {
    writeFileSync(join(project, '.gitignore'), 'node_modules/');
    const init = await pipeline(['init']);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/^wrote recipes\/assets\.yaml, \.github\/workflows\/assets\.yml, .*\.gitignore in /);
    expect(init.stdout).toContain('npx media-pipeline validate recipes/assets.yaml');
    expect(init.stdout).not.toMatch(/npx pipeline\b/);

    const recipe = readFileSync(join(project, 'recipes', 'assets.yaml'), 'utf8');
    const schemaRef = /^# yaml-language-server: \$schema=(.+)$/m.exec(recipe)?.[1];
    expect(schemaRef).toBeDefined();
    const schema = JSON.parse(readFileSync(resolve(project, 'recipes', schemaRef!), 'utf8'));
    expect(schema.properties.steps).toBeDefined();

    const workflow = parse(readFileSync(join(project, '.github', 'workflows', 'assets.yml'), 'utf8'));
    const steps = workflow.jobs.assets.steps as Array<{
      uses?: string;
      with?: Record<string, string>;
      env?: Record<string, string>;
    }>;
    // No action is guessed for a step given the API key: a placeholder GitHub refuses, and a line saying so.
    const action = steps.find((step) => step.uses === '<owner>/<repo>@<tag-or-commit>');
    expect(init.stdout).toContain(
      'in .github/workflows/assets.yml, replace <owner>/<repo>@<tag-or-commit> with the repository you got media-pipeline from',
    );
    // The package is not in the project: npx would look for its name on the registry.
    // Without --action, only this machine's folder is known, and the line says so.
    expect(init.stdout).toContain(
      `npm install --save-dev ${resolve(cli, '..', '..', '..')}     # this machine's media-pipeline; elsewhere github:OWNER/REPO#TAG`,
    );
    // The runner's Node is chosen before the action builds the tool, and a change of the workflow runs it.
    const setupNode = steps.findIndex((step) => step.uses === 'actions/setup-node@v4');
    expect(setupNode).toBeGreaterThan(-1);
    expect(setupNode).toBeLessThan(steps.indexOf(action!));
    expect(workflow.on.push.paths).toEqual([
      'recipes/assets.yaml',
      'recipes/assets/**',
      '.github/workflows/assets.yml',
    ]);
    expect(action?.with).toMatchObject({ recipe: 'recipes/assets.yaml', 'api-key': '${{ secrets.PIPELINE_API_KEY }}' });
    // Without a gateway address the tool stops before it sends anything: the workflow must give one.
    expect(action?.env).toEqual({ PIPELINE_BASE_URL: '${{ vars.PIPELINE_BASE_URL }}' });
    expect(init.stdout).toContain('add the secret PIPELINE_API_KEY and the variable PIPELINE_BASE_URL');

    expect(readFileSync(join(project, '.gitignore'), 'utf8')).toBe(
      'node_modules/\n# media-pipeline: runs, logs and the step cache\n.pipeline/\n',
    );

    const validated = await pipeline(['validate', 'recipes/assets.yaml']);
    expect(validated.stdout).toBe('recipes/assets.yaml: valid: 2 steps in 2 layers, 2 inputs, 1 run');
    const run = await pipeline(['run', 'recipes/assets.yaml', '--local', '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.status).toBe('succeeded');
    expect(report.outputs.backgrounds).toHaveLength(3);
    expect(existsSync(report.outputs.icon.path)).toBe(true);
  });

  it('refuses to overwrite without --force, and with it overwrites without adding .pipeline/ twice', async () => {
    expect((await pipeline(['init'])).exitCode).toBe(0);
    const recipePath = join(project, 'recipes', 'assets.yaml');
    writeFileSync(recipePath, 'my own recipe');
    const again = await pipeline(['init']);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toBe(
      `pipeline: recipes/assets.yaml and .github/workflows/assets.yml exist already in ${project}; ` +
        'nothing was written (--force overwrites)',
    );
    expect(readFileSync(recipePath, 'utf8')).toBe('my own recipe');

    const forced = await pipeline(['init', '--force']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(readFileSync(recipePath, 'utf8')).toMatch(/^# yaml-language-server/);
    expect(readFileSync(join(project, '.gitignore'), 'utf8').match(/^\.pipeline\/$/gm)).toHaveLength(1);
  });

  it('writes into --dir, creating it, and says to cd there first', async () => {
    const init = await pipeline(['init', '--dir', 'game']);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(existsSync(join(project, 'game', 'recipes', 'assets.yaml'))).toBe(true);
    expect(existsSync(join(project, 'game', '.gitignore'))).toBe(true);
    expect(init.stdout).toMatch(/^next:\n {2}cd game\n/m);
  });

  it('writes the action --action names into the workflow, and refuses a reference that is not one', async () => {
    const init = await pipeline(['init', '--dir', 'pinned', '--action', 'acme/media-pipeline@3f2c1e9']);
    expect(init.exitCode, init.stderr).toBe(0);
    const workflow = readFileSync(join(project, 'pinned', '.github', 'workflows', 'assets.yml'), 'utf8');
    expect(workflow).toContain('      - uses: acme/media-pipeline@3f2c1e9\n');
    expect(workflow).not.toContain('<owner>');
    expect(init.stdout).not.toContain('replace <owner>');
    // The package comes from the repository and ref the action does, which npm installs and builds.
    expect(init.stdout).toContain('  npm install --save-dev github:acme/media-pipeline#3f2c1e9 ');
    const bad = await pipeline(['init', '--dir', 'unpinned', '--action', 'media-pipeline']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--action takes OWNER/REPO@REF');
    expect(existsSync(join(project, 'unpinned'))).toBe(false);
  });
});

describe('shell completion', () => {
  it('prints a script for bash, zsh and fish that asks the program itself', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const script = await pipeline(['completion', shell]);
      expect(script.exitCode, script.stderr).toBe(0);
      expect(script.stdout).toContain('pipeline complete --');
    }
    expect((await pipeline(['completion', 'tcsh'])).exitCode).toBe(2);
  });

  it('completes commands and options', async () => {
    const commands = (await pipeline(['complete', '--', 'ru'])).stdout;
    expect(commands.split('\n').map((line) => line.split('\t')[0])).toEqual(['run', 'runs', ':4']);
    const options = (await pipeline(['complete', '--', 'run', '--lo'])).stdout;
    expect(options.split('\n').map((line) => line.split('\t')[0])).toContain('--local');
  });

  it.skipIf(!existsSync(BASH_COMPLETION) && !process.env.CI)('completes in a real bash', async () => {
    const bin = join(project, 'bin');
    await mkdir(bin);
    await symlink(cli, join(bin, 'pipeline'));
    await chmod(cli, 0o755);
    const script = [
      `source ${BASH_COMPLETION}`,
      'source <(pipeline completion bash)',
      'COMP_WORDS=(pipeline ru); COMP_CWORD=1; COMP_LINE="pipeline ru"; COMP_POINT=${#COMP_LINE}',
      '__pipeline_complete 2>/dev/null; printf "%s\\n" "${COMPREPLY[@]}"',
    ].join('\n');
    const shell = await execa('bash', ['-c', script], {
      reject: false,
      env: { PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    });
    expect(shell.stdout.split('\n')).toEqual(['run', 'runs']);
  });
});
