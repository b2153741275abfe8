import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournalFile } from '../../src/store/journal.js';
import { twelveImages } from '../support/recipes.js';

const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const fullDisk = fileURLToPath(new URL('../support/full-journal-disk.mjs', import.meta.url));

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-journal-full-'));
  await writeFile(join(home, 'twelve.yaml'), twelveImages());
});
afterAll(() => rm(home, { recursive: true, force: true }));

const env = () => ({ PIPELINE_HOME: home, CI: 'true', FULL_AFTER_WRITES: '12' });

// The fault needs /proc to tell the journal's descriptor from the others.
describe.runIf(existsSync('/proc/self/fd'))('a run whose journal’s disk fills up', () => {
  it('stops with exit 1 and a message that says how to go on, and the resume completes it', async () => {
    const args = [cli, 'run', join(home, 'twelve.yaml'), '--local', '--no-cache', '--no-report'];
    const run = await execa('node', ['--import', fullDisk, ...args], { reject: false, env: env(), cwd: home });
    expect(run.exitCode, run.stderr).toBe(1);
    const [runId] = readdirSync(join(home, 'runs'));
    expect(run.stderr).toContain(
      `pipeline: cannot write the run's journal ${join(home, 'runs', runId!, 'journal.jsonl')}: ENOSPC, no space left on device. ` +
        `The run stopped: no task was sent after the last line it could write. Make room, then resume it: pipeline resume ${runId}`,
    );
    // Not a crash: no stack trace.
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr).not.toMatch(/Node\.js v/);
    // The journal ends on its last whole line, and every submission in it has its request recorded first.
    const journal = readJournalFile(join(home, 'runs', runId!, 'journal.jsonl'));
    expect(journal.damagedLines).toEqual([]);
    const submitted = journal.events.filter((e) => e.type === 'task-submitted').length;
    expect(submitted).toBeLessThan(12);

    // A submission whose answer came but could not be written is in doubt: resumed as the message for it says.
    const resume = [cli, 'resume', runId!, '--resubmit-unknown', '--local', '--no-cache', '--no-report', '--json'];
    const resumed = await execa('node', resume, {
      reject: false,
      env: env(),
      cwd: home,
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).files).toHaveLength(12);
  });
});

describe.runIf(existsSync('/dev/full'))('a run whose console’s disk is full', () => {
  it('goes on to the end unprinted, its journal whole, and exits 1 for what it could not print', async () => {
    const consoleHome = await mkdtemp(join(tmpdir(), 'pipeline-console-full-'));
    try {
      const args = [cli, 'run', join(home, 'twelve.yaml'), '--local', '--no-cache', '--no-report'];
      // stderr, where a run prints its progress, is a device that answers every write with ENOSPC.
      const full = openSync('/dev/full', 'w');
      const child = spawn('node', args, {
        env: { ...process.env, PIPELINE_HOME: consoleHome, CI: 'true' },
        cwd: home,
        stdio: ['ignore', 'ignore', full],
      });
      const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      closeSync(full);
      expect(exitCode).toBe(1);
      const [runId] = readdirSync(join(consoleHome, 'runs'));
      const journal = readJournalFile(join(consoleHome, 'runs', runId!, 'journal.jsonl'));
      expect(journal.events.at(-1)).toMatchObject({ type: 'run-finished', status: 'succeeded' });
      expect(journal.events.filter((e) => e.type === 'output-written')).toHaveLength(12);
    } finally {
      await rm(consoleHome, { recursive: true, force: true });
    }
  });
});
