import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askYes } from '../../src/ask-yes.js';

/** The question on a terminal whose keyboard is `stdin`, and whose screen is thrown away. */
const askOnTerminal = (question: string, stdin: PassThrough) => askYes(question, stdin, new PassThrough());

describe('the question before a costly run', () => {
  it('is yes only for y or yes', async () => {
    for (const [typed, yes] of [
      ['y\n', true],
      ['YES\n', true],
      ['n\n', false],
      ['\n', false],
    ] as const) {
      const stdin = new PassThrough();
      const asked = askOnTerminal('Start it? [y/N] ', stdin);
      stdin.write(typed);
      expect(await asked).toBe(yes);
    }
  });

  it('is no when the input ends unanswered, rather than waiting for ever', async () => {
    const stdin = new PassThrough();
    const asked = askOnTerminal('Start it? [y/N] ', stdin);
    stdin.end();
    expect(await asked).toBe(false);
  });
});
