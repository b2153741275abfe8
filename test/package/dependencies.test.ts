// The runtime dependencies a user's install gets, read from the lockfile and package.json: each
// must run on the oldest Node that package.json's engines admits. A user's `npm install` resolves
// them afresh (a package's lockfile is not published), so a dependency whose newer releases need a
// newer Node must be pinned in `dependencies`, where the user's install sees the pin too: fastify
// accepts any light-my-request 6, and 6.8 brings cookie 2 (ESM only, Node 22).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};
const repo = fileURLToPath(new URL('../..', import.meta.url));
const ownPackage = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));

/** Runtime packages whose floor is above engines' by a patch release, and why that is accepted. */
const KNOWN_FLOORS: Record<string, string> = {
  // undici 7, chosen for the project, starts at 20.18.1 in every release; engines says >=20.18.
  'node_modules/undici': '20.18.1',
};

describe('runtime dependencies', () => {
  it("run on the oldest Node that package.json's engines admits", () => {
    const oldest = semver.minVersion(ownPackage.engines.node)?.version;
    expect(oldest).toBe('20.18.0');
    const refusing = Object.entries(
      lock.packages as Record<
        string,
        { dev?: boolean; devOptional?: boolean; version?: string; engines?: { node?: string } }
      >,
    )
      .filter(([path, entry]) => path && !entry.dev && !entry.devOptional && entry.engines?.node)
      .filter(([path, entry]) => !semver.satisfies(KNOWN_FLOORS[path] ?? oldest!, entry.engines!.node!))
      .map(([path, entry]) => `${path}@${entry.version} (node ${entry.engines!.node})`);
    expect(refusing).toEqual([]);
  });

  it('pin light-my-request where a user install sees it: its later releases need Node 22', () => {
    expect(ownPackage.dependencies['light-my-request']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(lock.packages['node_modules/light-my-request'].version).toBe(ownPackage.dependencies['light-my-request']);
    // Installed at the top, so that fastify's `^6` takes this one rather than a newer copy of its own.
    expect(lock.packages['node_modules/fastify/node_modules/light-my-request']).toBeUndefined();
  });
});
