import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/recipe/analyzer.js';
import { formatDiagnostics } from '../../src/recipe/diagnostics.js';
import { bundledDeps } from './bundled-deps.js';
import { INVALID_CASES } from './cases.js';

/** The example recipes and every invalid case: the documents the mutations start from. */
const seeds: Array<{ text: string; sets?: string[] }> = [
  ...readdirSync('recipes')
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => ({ text: readFileSync(join('recipes', name), 'utf8') })),
  ...INVALID_CASES.map((c) => ({ text: c.yaml, ...(c.sets ? { sets: c.sets } : {}) })),
];

type Op = 'delete' | 'duplicate' | 'retype';
interface Mutation {
  op: Op;
  /** Picks the node: an index into the document's nodes, modulo their number. */
  at: number;
  replacement: unknown;
}

const REPLACEMENTS: unknown[] = [
  null,
  0,
  -1,
  1.5,
  Number.POSITIVE_INFINITY,
  '',
  'x',
  true,
  [],
  [null],
  {},
  { uses: null },
  { run: 5 },
  '${{',
  '${{ steps.a.outputs[ }}',
  '${{ inputs.__proto__ }}',
  '__proto__',
  'constructor',
  'a/b',
];

/** Every node of a parsed document as its path, the root first. */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  const own = [at];
  if (Array.isArray(value)) return own.concat(...value.map((item, i) => paths(item, [...at, i])));
  if (typeof value === 'object' && value !== null)
    return own.concat(...Object.entries(value).map(([k, v]) => paths(v, [...at, k])));
  return own;
}

function mutate(document: unknown, mutation: Mutation): unknown {
  const all = paths(document);
  const path = all[mutation.at % all.length]!;
  if (path.length === 0) return mutation.op === 'retype' ? mutation.replacement : document;
  const parent = path.slice(0, -1).reduce<any>((node, part) => node[part], document);
  const key = path[path.length - 1]!;
  if (mutation.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
  } else if (mutation.op === 'duplicate') {
    const copy = structuredClone(parent[key]);
    if (Array.isArray(parent)) parent.push(copy);
    else parent[`${String(key)}_copy`] = copy;
  } else parent[key] = structuredClone(mutation.replacement);
  return document;
}

const mutationArbitrary = fc.record({
  op: fc.constantFrom<Op>('delete', 'duplicate', 'retype'),
  at: fc.nat(),
  replacement: fc.constantFrom(...REPLACEMENTS),
});

const caseArbitrary = fc.record({
  seed: fc.nat(seeds.length - 1),
  mutations: fc.array(mutationArbitrary, { minLength: 1, maxLength: 4 }),
  /** Cut the mutated text at this fraction of its length, or leave it whole. */
  truncate: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 4 }),
});

describe('the analyzer on mutated recipes', () => {
  it('ends every one as a plan or as diagnostics, never a throw', () => {
    fc.assert(
      fc.property(caseArbitrary, ({ seed, mutations, truncate }) => {
        const source = seeds[seed]!;
        let document: unknown;
        try {
          document = parse(source.text);
        } catch {
          document = source.text;
        }
        for (const mutation of mutations) document = mutate(document, mutation);
        let text = stringify(document);
        if (truncate !== null) text = text.slice(0, Math.floor(text.length * truncate));
        const result = analyze(
          { path: 'recipes/mutated.yaml', text, cwd: process.cwd(), ...(source.sets ? { sets: source.sets } : {}) },
          bundledDeps,
        );
        if (result.ok) return;
        expect(result.error.length).toBeGreaterThan(0);
        const printed = formatDiagnostics(result.error);
        expect(printed).not.toMatch(/Internal error/);
        expect(printed).toMatch(/^(recipes\/mutated\.yaml|command line):\d+:\d+: error: /);
      }),
      { seed: 20261122, numRuns: 2_000 },
    );
  });
});
