import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { pipelineInProcess, TestInterrupts } from '../support/cli.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'pipeline-resume-hint-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A run of a command that waits, stopped with Ctrl-C once the command runs: its printed resume command. */
async function stoppedRun(flags: string[]): Promise<string> {
  const recipe = join(work, 'slow.yaml');
  await writeFile(recipe, 'version: 1\nname: slow\nsteps:\n  wait:\n    run: sleep 20\n');
  const interrupts = new TestInterrupts();
  const pressed = (async () => {
    while (!interrupts.listened()) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    interrupts.press();
  })();
  const run = await pipelineInProcess(['run', recipe, '--local', ...flags], {
    env: { PIPELINE_HOME: join(work, 'home'), PATH: process.env.PATH ?? '' },
    cwd: work,
    clock: systemClock,
    interrupts,
  });
  await pressed;
  expect(run.exitCode, run.stderr).toBe(130);
  const printed = /Resume with:\n {2}(.+)$/m.exec(run.stderr)?.[1];
  expect(printed, run.stderr).toBeDefined();
  return printed!.replace(/^.*? resume \S+/, 'resume RUN');
}

describe('the resume command a stopped run prints', () => {
  it('keeps the pace, the slots and --out given on the command line: without them a resume runs at the recipe’s, and copies nothing', async () => {
    expect(await stoppedRun(['--rpm', '20', '--concurrency', '4', '--queue-ahead', '2'])).toBe(
      'resume RUN --local --rpm 20 --concurrency 4 --queue-ahead 2',
    );
    expect(await stoppedRun(['--rpm', 'auto', '--out', 'my outputs'])).toBe(
      "resume RUN --local --rpm auto --out 'my outputs'",
    );
  });
});
