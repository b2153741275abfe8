import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const ownPackage = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const tarballName = `${ownPackage.name}-${ownPackage.version}.tgz`;

interface LockEntry {
  dev?: boolean;
  devOptional?: boolean;
  [field: string]: unknown;
}

/**
 * The lockfile `npm install ./media-pipeline-x.y.z.tgz` would write in an empty project: the
 * package from the tarball, and this repository's locked runtime dependencies at the top of
 * node_modules (the same versions and tarballs, so `npm ci --offline` finds every one of them in
 * npm's cache, which `npm ci` of this repository filled). No registry is asked.
 */
function consumerLock(): Record<string, unknown> {
  const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));
  const { license, dependencies, optionalDependencies, bin, engines } = ownPackage;
  const spec = `file:../${tarballName}`;
  const packages: Record<string, unknown> = {
    '': { name: 'game', dependencies: { [ownPackage.name]: spec } },
    [`node_modules/${ownPackage.name}`]: {
      version: ownPackage.version,
      resolved: spec,
      ...{ license, dependencies, optionalDependencies, bin, engines },
    },
  };
  for (const [path, entry] of Object.entries(lock.packages as Record<string, LockEntry>))
    if (path && !entry.dev && !entry.devOptional) packages[path] = entry;
  return { name: 'game', lockfileVersion: 3, requires: true, packages };
}

let work: string;
let project: string;
let packed: string[];

/** A command in the consumer project, with npm told never to reach a registry. */
const inProject = (file: string, args: string[]) =>
  execa(file, args, {
    cwd: project,
    reject: false,
    env: {
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      CI: 'true',
      PIPELINE_HOME: join(project, '.pipeline'),
      // What is tested is the install and that the kit runs, not the models' pace: a tenth of --local's.
      PIPELINE_LOCAL_LATENCY_SCALE: '0.02',
    },
  });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-tarball-'));
  project = join(work, 'game');
  // `npm test` has just built dist/; packing it as it is keeps the build out of the timing.
  const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: repo });
  packed = (JSON.parse(pack.stdout)[0].files as Array<{ path: string }>).map((file) => file.path);
  await mkdir(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'game', private: true, dependencies: { [ownPackage.name]: `file:../${tarballName}` } }),
  );
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(consumerLock(), null, 2));
}, 120_000);
afterAll(() => rm(work, { recursive: true, force: true }));

describe('the packed tarball', () => {
  it('holds the runtime files and nothing of the build or the tests', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'dist/cli/main.js',
        'schemas/recipe.schema.json',
        'recipes/launch-kit.yaml',
        'recipes/starter.yaml',
        'docs/recipe-language.md',
        'README.md',
      ]),
    );
    expect(
      packed.filter((path) => /^(test|bench|src\/(?!local-gateway\/web-corpus\/))|tsbuildinfo/.test(path)),
    ).toEqual([]);
  });

  it('installs into an empty project offline and runs the launch kit there with --local', async () => {
    const install = await inProject('npm', ['ci']);
    expect(install.exitCode, install.stderr).toBe(0);
    for (const bin of ['media-pipeline', 'pipeline'])
      expect(existsSync(join(project, 'node_modules', '.bin', bin)), bin).toBe(true);

    // A user starts from the package's example recipes.
    cpSync(join(project, 'node_modules', 'media-pipeline', 'recipes'), join(project, 'recipes'), { recursive: true });
    const validated = await inProject('npx', ['media-pipeline', 'validate', 'recipes/launch-kit.yaml']);
    expect(validated.stdout).toMatch(/^recipes\/launch-kit\.yaml: valid: 6 steps/);

    const run = await inProject('npx', ['media-pipeline', 'run', 'recipes/launch-kit.yaml', '--local', '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.status).toBe('succeeded');
    expect(report.run_dir.startsWith(join(project, '.pipeline', 'runs'))).toBe(true);
    const outputs = readdirSync(report.outputs_dir);
    expect(outputs.filter((name) => name.endsWith('.png')).length).toBeGreaterThanOrEqual(4);
    expect(outputs.filter((name) => name.endsWith('.mp4'))).toHaveLength(1);
    // The packaged ffmpeg rendered the clip: no note that it was passed through unchanged.
    expect(run.stderr).not.toMatch(/no ffmpeg/);
    expect(existsSync(join(report.run_dir, 'report.html'))).toBe(true);

    // init in a project that installed the package points the recipe at the installed schema.
    const init = await inProject('npx', ['media-pipeline', 'init']);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(readFileSync(join(project, 'recipes', 'assets.yaml'), 'utf8')).toMatch(
      /^# yaml-language-server: \$schema=\.\.\/node_modules\/media-pipeline\/schemas\/recipe\.schema\.json$/m,
    );
  }, 180_000);
});
