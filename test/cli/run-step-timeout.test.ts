/**
 * A `run:` step past its time limit is stopped with everything it started: a shell's children keep
 * its output pipes open, so stopping the shell alone left the step running until they ended.
 */
import { execa } from 'execa';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { pipelineInProcess } from '../support/cli.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'pipeline-run-timeout-'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

/** The processes still running whose command line contains `text`. */
async function running(text: string): Promise<string[]> {
  const { stdout } = await execa('pgrep', ['-f', text], { reject: false });
  return stdout.split('\n').filter(Boolean);
}

describe.skipIf(process.platform === 'win32')('a run: step past its timeout', () => {
  it('fails at its limit with the shell and the children it started stopped', async () => {
    const recipe = join(home, 'slow.yaml');
    // Two children that outlive a stopped shell, each holding its output pipes: text through the
    // shell, and an argv list whose program is a shell too.
    await writeFile(
      recipe,
      `version: 1
name: slow
steps:
  text:
    run: "sleep 29.517 & sleep 29.518; echo never"
    timeout: 1s
  list:
    run: [sh, -c, "sleep 29.519 & sleep 29.521"]
    timeout: 1s
`,
    );
    const result = await pipelineInProcess(['run', recipe, '--local', '--json'], {
      env: { ...process.env, PIPELINE_HOME: home, CI: 'true' },
      clock: systemClock,
    });
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toContain('✗ text failed: the step took longer than its time limit of 1s');
    expect(result.stderr).toContain('✗ list failed: the step took longer than its time limit of 1s');
    const { run_dir } = JSON.parse(result.stdout);
    const journal = (await readFile(join(run_dir, 'journal.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; t: number; step?: string });
    for (const step of ['text', 'list']) {
      const started = journal.find((e) => e.type === 'step-started' && e.step === step)!;
      const ended = journal.find((e) => e.type === 'step-failed' && e.step === step)!;
      // Stopped at its limit, not when its children would have ended (29.5 s): a margin for a loaded machine.
      expect(ended.t - started.t).toBeLessThan(15_000);
    }
    expect(await running('sleep 29.5')).toEqual([]);
  });
});
