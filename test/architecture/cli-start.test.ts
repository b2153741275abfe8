/**
 * What every `pipeline` command loads before it does anything: the modules `dist/cli/main.js`
 * imports statically, through every static import after it. A command loads the Redis client,
 * BullMQ, the S3 client, libvips, the browser driver or the local gateway's server only when it uses
 * them (a dynamic import): ioredis alone was a tenth of a second of every command's start.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
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
});
