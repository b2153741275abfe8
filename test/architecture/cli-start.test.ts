/**
 * What every `pipeline` command loads before it does anything: the modules `dist/cli/main.js`
 * imports statically, through every static import after it. A command loads the Redis client,
 * BullMQ, the S3 client, libvips, the browser driver or the local gateway's server only when it uses
 * them (a dynamic import): ioredis alone was a tenth of a second of every command's start.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const HEAVY = ['ioredis', 'bullmq', '@aws-sdk/client-s3', 'sharp', 'playwright-core', 'fastify', 'linkedom', 'ajv'];

/** The packages reached by static imports from `entry`, with the chain of modules that reaches each. */
function staticPackages(entry: string): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, specifier] of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/gm)) {
      if (specifier!.startsWith('.')) walk(normalize(join(dirname(file), specifier!)), [...chain, file]);
      else if (!specifier!.startsWith('node:')) {
        const name = specifier!
          .split('/')
          .slice(0, specifier!.startsWith('@') ? 2 : 1)
          .join('/');
        if (!packages.has(name))
          packages.set(
            name,
            [...chain, file].map((f) => f.slice(dist.length)),
          );
      }
    }
  };
  walk(entry, []);
  return packages;
}

/**
 * The packages and modules of dist/ that a whole `pipeline` process loads, static and dynamic
 * imports alike (an ESM loader hook records every module it loads; CommonJS packages are seen by
 * their entry module).
 */
function loadedBy(args: string[], cwd: string): { packages: Set<string>; modules: Set<string> } {
  const trace = mkdtempSync(join(tmpdir(), 'module-trace-'));
  try {
    const list = join(trace, 'loaded.txt');
    writeFileSync(
      join(trace, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(list)}, url + '\\n');\n  return next(url, context);\n}\n`,
    );
    writeFileSync(
      join(trace, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(trace, 'hooks.mjs')).href)});\n`,
    );
    writeFileSync(list, '');
    execFileSync(process.execPath, ['--import', join(trace, 'register.mjs'), join(dist, 'cli', 'main.js'), ...args], {
      cwd,
      env: { ...process.env, PIPELINE_HOME: join(trace, 'home') },
      stdio: 'pipe',
    });
    const urls = readFileSync(list, 'utf8').split('\n').filter(Boolean);
    const packages = new Set(
      urls.flatMap((url) => {
        const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
        return match ? [match[1]!] : [];
      }),
    );
    const modules = new Set(
      urls
        .filter((url) => url.startsWith(pathToFileURL(dist).href))
        .map((url) => url.slice(pathToFileURL(dist).href.length)),
    );
    return { packages, modules };
  } finally {
    rmSync(trace, { recursive: true, force: true });
  }
}

/** What `validate` and `plan` of a recipe need no part of: they analyze, price and print. */
const NOT_FOR_ANALYSIS = [...HEAVY, 'ajv-formats', 'execa', 'yaml', 'undici', 'pino', 'msgpackr'];

describe("the command line's start", () => {
  it('loads none of the heavy packages until a command uses them', () => {
    const loaded = staticPackages(join(dist, 'cli', 'main.js'));
    const heavy = HEAVY.filter((name) => loaded.has(name)).map(
      (name) => `${name} <- ${loaded.get(name)!.join(' <- ')}`,
    );
    expect(heavy).toEqual([]);
    // The walk sees the packages the start does load: it is not blind.
    expect([...loaded.keys()]).toContain('commander');
  });

  it('validates and plans a recipe of every built-in action without Ajv, execa, yaml, the engine or the gateway client', () => {
    const dir = mkdtempSync(join(tmpdir(), 'analysis-loads-'));
    try {
      copyFileSync(new URL('../../recipes/assets/logo.png', import.meta.url), join(dir, 'logo.png'));
      writeFileSync(
        join(dir, 'every-action.yaml'),
        [
          'version: 1',
          'name: every-action',
          'inputs:',
          '  topic: { type: string, default: cargo bikes }',
          'steps:',
          '  search: { uses: web-search, with: { query: "${{ inputs.topic }}", max_results: 3 } }',
          '  fetch: { uses: web-fetch, with: { urls: ["https://example.com/a"] } }',
          '  summary: { uses: llm, with: { model: vendor-x/writer-1, prompt: "Sum up ${{ steps.search.outputs.results[*].content }}" } }',
          '  logo: { uses: upload, with: { path: ./logo.png } }',
          '  hero: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: "${{ steps.summary.outputs.text }}", n: 1 } }',
          '  edit: { uses: vendor-b/vendor-b-5.0-lite-edit, with: { prompt: make it blue, image: ["${{ steps.hero.outputs.images[0].url }}"] } }',
          '  list: { run: "ls ${{ run.dir }}" }',
          '',
        ].join('\n'),
      );
      for (const args of [
        ['validate', 'every-action.yaml'],
        ['plan', 'every-action.yaml', '--format', 'json'],
      ]) {
        const { packages, modules } = loadedBy(args, dir);
        expect(packages.has('js-yaml'), 'the walk sees the packages the command loads').toBe(true);
        expect(
          NOT_FOR_ANALYSIS.filter((name) => packages.has(name)),
          args[0],
        ).toEqual([]);
        expect(
          [...modules].filter((module) => /^(engine\/engine|gateway\/client|actions\/runners)\.js$/.test(module)),
          args[0],
        ).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
