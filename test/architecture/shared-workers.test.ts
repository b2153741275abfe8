/**
 * The suite runs test files one after another in each worker process, sharing its modules
 * (vitest.config.ts, `isolate: false`). That is sound only while no test changes what the next file
 * would see: a mocked module, a stubbed global, the environment, the working directory.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SHARED_STATE =
  /\bvi\.(mock|doMock|stubEnv|stubGlobal|useFakeTimers)\(|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env|process\.chdir\(/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return /\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('test files that share a worker process', () => {
  it('change no module, global, environment variable or working directory another file would see', () => {
    const offenders = testFiles(join(root, 'test'))
      .filter((path) => !path.endsWith('shared-workers.test.ts'))
      .filter((path) => SHARED_STATE.test(readFileSync(path, 'utf8')))
      .map((path) => relative(root, path));
    expect(offenders).toEqual([]);
  });

  it('would catch one that does', () => {
    expect(SHARED_STATE.test("vi.mock('../src/clock.js')")).toBe(true);
    expect(SHARED_STATE.test('process.env.PIPELINE_HOME = dir;')).toBe(true);
    expect(SHARED_STATE.test("process.env['CI'] = 'true';")).toBe(true);
    expect(SHARED_STATE.test('if (process.env.CI === "true") {}')).toBe(false);
  });
});
