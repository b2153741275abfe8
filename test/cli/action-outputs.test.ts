/**
 * The action's outputs (action/outputs.mjs) from what `pipeline run --json` answered and its exit
 * code, for the answers of a run that never started: no run, so no paths, and the reason's status.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../action/outputs.mjs', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pipeline-action-outputs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function outputsFor(answer: string, code: number): Promise<Record<string, string>> {
  const file = join(dir, `answer-${code}-${answer.length}.json`);
  await writeFile(file, answer);
  const { stdout } = await execa('node', [script, file, String(code)]);
  return Object.fromEntries(stdout.split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
}

describe('the action outputs of a run that did not start', () => {
  it('take the status of the answer, with empty paths and no spend', async () => {
    const none = { 'run-id': '', 'spend-usd': '0', 'outputs-dir': '', report: '' };
    const refused = { run_id: null, status: 'refused', message: 'the estimated cost is over', diagnostics: [] };
    expect(await outputsFor(JSON.stringify(refused), 2)).toEqual({ ...none, status: 'refused' });
    const down = { run_id: null, status: 'error', message: 'could not connect', diagnostics: [] };
    expect(await outputsFor(JSON.stringify(down), 1)).toEqual({ ...none, status: 'error' });
    // No answer at all (a tool older than these answers, or a crash): the exit code says what it can.
    expect(await outputsFor('', 2)).toEqual({ ...none, status: 'invalid' });
  });
});
