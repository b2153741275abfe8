import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let gateway: LocalGateway;
let dir: string;

beforeAll(async () => {
  gateway = await startLocalGateway({ latencyScale: 0 });
  dir = await mkdtemp(join(tmpdir(), 'pipeline-hostile-'));
});
afterAll(async () => {
  await gateway.close();
  await rm(dir, { recursive: true, force: true });
});

const pipeline = (args: string[]) =>
  execa('node', [cli, ...args], {
    reject: false,
    cwd: dir,
    env: {
      PIPELINE_API_KEY: gateway.apiKey,
      PIPELINE_BASE_URL: gateway.baseUrl,
      PIPELINE_HOME: join(dir, 'home'),
      PATH: process.env.PATH ?? '',
    },
    extendEnv: false,
  });

/** What a crash prints: the words of a broken invariant, of a blown stack, or a stack trace. */
const INTERNAL = /Internal error|Maximum call stack|RangeError|\n\s+at /;

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('hostile or huge input ends in a located error, exit 2', () => {
  it('validate: a list nested 3,000 deep', async () => {
    const recipe = join(dir, 'deep.yaml');
    await writeFile(
      recipe,
      `version: 1\nname: deep\nsteps:\n  a:\n    uses: web-search\n    with: { query: x, extra: ${nested(3000)} }\n`,
    );
    const result = await pipeline(['validate', recipe]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).not.toMatch(INTERNAL);
    expect(result.stderr.split('\n')[0]).toBe(
      `${recipe}:6:90: error: this list or mapping is nested more than 64 deep; lists and mappings may nest at most 64 deep`,
    );
  });

  it('validate: 200 steps whose needs hold 3,000,000 characters of unknown names', async () => {
    const recipe = join(dir, 'needs.yaml');
    const lines = ['version: 1', 'name: needs', 'steps:'];
    for (let i = 0; i < 200; i++)
      lines.push(`  s${i}:`, '    uses: web-search', `    needs: ${'n'.repeat(14_990)}${i}`, '    with: { query: x }');
    await writeFile(recipe, `${lines.join('\n')}\n`);
    const result = await pipeline(['validate', recipe]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).not.toMatch(INTERNAL);
    expect(result.stderr.split('\n').at(-1)).toBe(`200 errors in ${recipe}`);
  });

  it('validate, plan and run: a batch row whose JSON nests 100,000 deep, with nothing sent', async () => {
    const recipe = join(dir, 'rows.yaml');
    await writeFile(
      recipe,
      'version: 1\nname: rows\ninputs:\n  t: { type: array }\nsteps:\n  a:\n    uses: web-search\n    for_each: ${{ inputs.t }}\n    with: { query: "${{ item }}" }\n',
    );
    const jsonl = join(dir, 'rows.jsonl');
    await writeFile(jsonl, `{"t": ["cargo bikes"]}\n{"t": ${nested(100_000)}}\n`);
    const csv = join(dir, 'rows.csv');
    await writeFile(csv, `t\n"${nested(100_000)}"\n`);
    const before = gateway.stats().requests.total;
    for (const [command, batch] of [
      ['validate', jsonl],
      ['plan', csv],
      ['run', jsonl],
    ] as const) {
      const result = await pipeline([command, recipe, '--batch', batch]);
      expect(result.exitCode, `${command}: ${result.stderr.slice(0, 300)}`).toBe(2);
      expect(result.stderr).not.toMatch(INTERNAL);
      expect(result.stderr.split('\n')[0]).toBe(
        `${batch}:2:1: error: input 't' nests lists and mappings more than 64 deep; a value may nest at most 64 deep`,
      );
    }
    await gateway.settle();
    expect(gateway.stats().requests.total).toBe(before);
  });
});
