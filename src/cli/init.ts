import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { Command } from 'commander';
import { packageRoot } from '../package-root.js';
import { UsageError } from './errors.js';
import { commandName } from './invocation.js';
import { fromCwd } from './io.js';
import { printLine } from './output.js';

/** Where `init` puts the starter files, relative to the project folder. */
const RECIPE = join('recipes', 'assets.yaml');
const WORKFLOW = join('.github', 'workflows', 'assets.yml');
const SCHEMA_COPY = join('recipes', 'recipe.schema.json');
const IGNORED = '.pipeline/';

const SCHEMA_LINE = /^# yaml-language-server: \$schema=.*$/m;

interface InitFlags {
  dir: string;
  force?: boolean;
  action?: string;
}

/**
 * The starter workflow's `uses:` until `--action` names the action. Its `<` and `>` are in no GitHub
 * name, so no one can publish an action it resolves to: a step given the API key must not run one.
 */
const ACTION_PLACEHOLDER = '<owner>/<repo>@<tag-or-commit>';
/** `owner/repo@ref` (a tag, a branch or a commit SHA), optionally with a path in the repository. */
const ACTION_REF = /^[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+(\/[A-Za-z0-9._/-]+)?@[A-Za-z0-9._/-]+$/;

/** `path` as a recipe's `$schema` reference: relative, with forward slashes. */
const asReference = (path: string) => path.split(sep).join('/');

/**
 * The `$schema` reference of the starter recipe: the installed package's own schema when the
 * package sits inside the project (node_modules), so it follows upgrades; else (a global install,
 * or the GitHub Action's own checkout) a copy beside the recipe, which `init --force` refreshes.
 */
function schemaReference(project: string, written: string[]): string {
  const schema = join(packageRoot(), 'schemas', 'recipe.schema.json');
  const fromRecipes = relative(join(project, 'recipes'), schema);
  if (installedIn(project)) return asReference(fromRecipes);
  copyFileSync(schema, join(project, SCHEMA_COPY));
  written.push(SCHEMA_COPY);
  return 'recipe.schema.json';
}

/** Whether the running media-pipeline sits inside the project (its node_modules, or the repository itself). */
const installedIn = (project: string) => !relative(project, packageRoot()).startsWith('..');

/** A path as one word for a POSIX shell: quoted when it holds anything but safe characters. */
const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/**
 * How the project gets media-pipeline as a dev dependency. The repository that `--action` names is
 * where it comes from, at the same ref: npm installs a GitHub repository and builds it (`prepare`).
 * Without it, the folder this one runs from, which only this machine has, so the line says so.
 */
function installLine(action: string | undefined): string {
  const source = action && /^([^/]+\/[^/@]+)@(.+)$/.exec(action);
  if (source)
    return `npm install --save-dev github:${source[1]}#${source[2]}     # media-pipeline, from the action's repository`;
  return `npm install --save-dev ${shellWord(packageRoot())}     # this machine's media-pipeline; elsewhere github:OWNER/REPO#TAG, the repository you got it from`;
}

/** Adds `.pipeline/` (runs, logs, the step cache) to the project's .gitignore unless it is there. */
function ignorePipelineFolder(project: string): boolean {
  const path = join(project, '.gitignore');
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  if (lines.some((line) => ['.pipeline', '.pipeline/', '/.pipeline', '/.pipeline/'].includes(line))) return false;
  const separator = text === '' || text.endsWith('\n') ? '' : '\n';
  writeFileSync(path, `${text}${separator}# media-pipeline: runs, logs and the step cache\n${IGNORED}\n`);
  return true;
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      'Start using pipeline in a repository: a starter recipe, a GitHub workflow that runs it with the action, and .pipeline/ in .gitignore.',
    )
    .option('--dir <folder>', 'the project folder', '.')
    .option('--force', 'overwrite the starter recipe and workflow when they exist')
    .option(
      '--action <owner/repo@ref>',
      'the GitHub Action the workflow uses (the repository you got media-pipeline from, at a tag or commit); else a placeholder to replace',
    )
    .action((flags: InitFlags) => {
      if (flags.action !== undefined && !ACTION_REF.test(flags.action))
        throw new UsageError(
          `--action takes OWNER/REPO@REF (a tag, a branch or a commit SHA), got ${JSON.stringify(flags.action)}; nothing was written`,
        );
      const project = fromCwd(flags.dir);
      const existing = [RECIPE, WORKFLOW].filter((path) => existsSync(join(project, path)));
      if (existing.length > 0 && !flags.force)
        throw new UsageError(
          `${existing.join(' and ')} ${existing.length === 1 ? 'exists' : 'exist'} already in ${project}; ` +
            'nothing was written (--force overwrites)',
        );
      const starters = join(packageRoot(), 'recipes');
      for (const path of [RECIPE, WORKFLOW]) mkdirSync(dirname(join(project, path)), { recursive: true });
      const written = [RECIPE, WORKFLOW];
      const recipe = readFileSync(join(starters, 'starter.yaml'), 'utf8').replace(
        SCHEMA_LINE,
        `# yaml-language-server: $schema=${schemaReference(project, written)}`,
      );
      writeFileSync(join(project, RECIPE), recipe);
      const workflow = readFileSync(join(starters, 'starter.workflow.yml'), 'utf8');
      writeFileSync(
        join(project, WORKFLOW),
        flags.action ? workflow.replace(`uses: ${ACTION_PLACEHOLDER}`, `uses: ${flags.action}`) : workflow,
      );
      if (ignorePipelineFolder(project)) written.push('.gitignore');
      const run = commandName();
      printLine(`wrote ${written.join(', ')} in ${project}`);
      printLine('next:');
      const here = relative(fromCwd('.'), project);
      if (here !== '') printLine(`  cd ${shellWord(here)}`);
      // Not in the project's node_modules: npx would look for the name on the registry instead.
      if (!installedIn(project)) printLine(`  ${installLine(flags.action)}`);
      printLine(`  ${run} validate ${asReference(RECIPE)}`);
      printLine(`  ${run} run ${asReference(RECIPE)} --local     # on the built-in gateway: no key, no cost`);
      if (!flags.action)
        printLine(
          `  in ${asReference(WORKFLOW)}, replace ${ACTION_PLACEHOLDER} with the repository you got media-pipeline from, at a tag or commit SHA (the step is given your API key)`,
        );
      printLine('  add the secret PIPELINE_API_KEY and the variable PIPELINE_BASE_URL (the media API base,');
      printLine('  ending in /api/v1) to the repository, then push: the workflow builds the assets');
    });
}
