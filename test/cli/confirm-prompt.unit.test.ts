import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askOnTerminal } from '../../src/cli/run-session.js';
import type { CliIo } from '../../src/cli/io.js';

/** A terminal whose keyboard is `stdin`, and whose screen is thrown away. */
const terminal = (stdin: PassThrough) => ({ stdin, stderr: new PassThrough() }) as unknown as CliIo;

describe('the question before a costly run', () => {
  it('is yes only for y or yes', async () => {
    for (const [typed, yes] of [
      ['y\n', true],
      ['YES\n', true],
      ['n\n', false],
      ['\n', false],
    ] as const) {
      const stdin = new PassThrough();
      const asked = askOnTerminal('Start it? [y/N] ', terminal(stdin));
      stdin.write(typed);
      expect(await asked).toBe(yes);
    }
  });

  it('is no when the input ends unanswered, rather than waiting for ever', async () => {
    const stdin = new PassThrough();
    const asked = askOnTerminal('Start it? [y/N] ', terminal(stdin));
    stdin.end();
    expect(await asked).toBe(false);
  });
});
